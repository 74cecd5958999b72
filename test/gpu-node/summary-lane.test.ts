import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { requestGenerate } from "../../workers/src/nats/generate-client.ts";
import { answerInput, collectAnswer, summaryRequest } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

const VIEW = "system: you are the chat specialist.\nuser: what is a KV cache?\nassistant:";

let nats: NatsServerHandle;
let t: TestNode;
/** Summaries the engine holds before generating, until the test lets them go. */
let heldSummaries = 0;
let letSummariesGo!: () => void;
const summariesMayGo = new Promise<void>((resolve) => (letSummariesGo = resolve));

beforeAll(async () => {
  nats = await startNatsServer();
  // One route or answer at a time, two summaries beside it in their own admission lane.
  t = await startTestNode({
    natsUrl: nats.url,
    models: inject("models"),
    node: { maxConcurrent: 1, maxConcurrentSummaries: 2 },
    wrapEngine: (engine) => ({
      ...engine,
      generate: async (request) => {
        if (request.lane === "summary") {
          heldSummaries++;
          await summariesMayGo;
          heldSummaries--;
        }
        return engine.generate(request);
      },
    }),
  });
});
afterAll(async () => {
  letSummariesGo();
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

async function admissionQueued(): Promise<number> {
  const metric = await t.node.metrics.registry.getSingleMetric("molmesh_admission_queued")?.get();
  return metric?.values[0]?.value ?? 0;
}

describe("the node's summary admission lane (MOL_MAX_CONCURRENT_SUMMARIES)", () => {
  it("answers while summaries fill their lane and queue: the answer never waits behind them", async () => {
    const summaries = [0, 1, 2].map((i) =>
      requestGenerate(
        t.client,
        summaryRequest(
          `summary-lane-${i}`,
          "chat",
          `${VIEW} a cache of keys and values.\nsummarize the turn above in one line:`,
          { requestId: `summary-lane-${i}`, timeoutMs: 60_000, sampling: { maxTokens: 8, temperature: 0 } },
        ),
      ),
    );
    // Two summaries admitted and held in the engine, the third waiting for the summary lane.
    await expect.poll(() => heldSummaries, { timeout: 10_000 }).toBe(2);
    await expect.poll(admissionQueued, { timeout: 10_000 }).toBe(1);
    // Sharing the one admission slot, this answer would wait for the held summaries until its deadline.
    const answer = await collectAnswer(
      t.client,
      answerInput("summary-lane-answer", "chat", VIEW, { timeoutMs: 5_000 }),
    );
    expect(answer.finish.type).toBe("finish");
    expect(heldSummaries).toBe(2);
    letSummariesGo();
    for (const summary of await Promise.all(summaries)) expect(summary.type).toBe("result");
  });
});
