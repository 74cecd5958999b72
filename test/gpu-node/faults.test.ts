import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CancelledError, DeadlineExceededError, OverloadedError } from "../../schema/wire/v2/index.ts";
import { requestRoute } from "../harness/generate-requests.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";
import { answerInput, collectAnswer } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({
    natsUrl: nats.url,
    models: inject("models"),
    engine: { slotsPerAdapter: 1, maxWaitingPerAdapter: 0 },
    // No fair queue: past 2 hops the node refuses at once (the old behaviour these tests pin).
    node: { maxConcurrent: 2, maxQueued: 0 },
  });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

/** Long enough that it cannot finish within the test's reaction time on the tiny model. */
const LONG = { sampling: { maxTokens: 900, temperature: 0.8, seed: 7 } };
const VIEW = "user: tell me a very long story\nassistant:";

async function waitUntil(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

const allSlotsFree = () => t.engine.snapshot().every((s) => s.freeSlots === s.totalSlots);

describe("cancellation, deadlines and overload", () => {
  it("an abort from the requester stops decoding promptly", async () => {
    const controller = new AbortController();
    const started = Date.now();
    let deltas = 0;
    const run = (async () => {
      for await (const part of streamGenerate(t.client, answerInput("cancel", "chat", VIEW, LONG), {
        signal: controller.signal,
      })) {
        if (part.type === "text-delta" && ++deltas === 3) controller.abort();
      }
    })();
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    await waitUntil(allSlotsFree, 1_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(t.logs.some((l) => l.message === "hop cancelled by requester")).toBe(true);
  });

  it("a consumer that stops reading cancels the hop on the node", async () => {
    for await (const part of streamGenerate(t.client, answerInput("break", "chat", VIEW, LONG))) {
      if (part.type === "text-delta") break;
    }
    await waitUntil(allSlotsFree, 1_000);
  });

  it("a hop past its deadline ends with deadline_exceeded and frees its slot", async () => {
    const run = collectAnswer(t.client, answerInput("deadline", "chat", VIEW, { ...LONG, timeoutMs: 80 }));
    await expect(run).rejects.toBeInstanceOf(DeadlineExceededError);
    await waitUntil(allSlotsFree, 1_000);
  });

  it("answers overloaded at once when the node is full, and serves again afterwards", async () => {
    const controller = new AbortController();
    const busy = ["agent", "coding"].map((adapter) =>
      collectAnswer(t.client, answerInput(`busy-${adapter}`, adapter, VIEW, LONG), {
        signal: controller.signal,
      }).catch((e: unknown) => e),
    );
    await waitUntil(() => t.engine.snapshot().filter((s) => s.freeSlots === 0).length === 2);
    const started = Date.now();
    const route = requestRoute(t.client, {
      requestId: "overloaded-route",
      slotKey: "x",
      prompt: "user: hi\n",
      timeoutMs: 10_000,
    });
    await expect(route).rejects.toBeInstanceOf(OverloadedError);
    expect(Date.now() - started).toBeLessThan(1_000);
    controller.abort();
    for (const outcome of await Promise.all(busy)) expect(outcome).toBeInstanceOf(CancelledError);
    await waitUntil(allSlotsFree);
    const ok = await collectAnswer(t.client, answerInput("after", "chat", VIEW));
    expect(ok.finish.type).toBe("finish");
  });

  it("refuses a request for a busy adapter when its slot queue is full", async () => {
    const controller = new AbortController();
    const first = collectAnswer(t.client, answerInput("one", "genui", VIEW, LONG), {
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await waitUntil(() => t.engine.snapshot().find((s) => s.adapter === "genui")?.freeSlots === 0);
    await expect(collectAnswer(t.client, answerInput("two", "genui", VIEW))).rejects.toBeInstanceOf(
      OverloadedError,
    );
    controller.abort();
    expect(await first).toBeInstanceOf(CancelledError);
    await waitUntil(allSlotsFree);
  });
});
