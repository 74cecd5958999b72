import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  WIRE_VERSION,
  buildHopSubject,
  errorReplySchema,
  streamPartSchema,
  type Hop,
} from "../../schema/wire/v2/index.ts";
import { answerInput, collectAnswer } from "../harness/collect-answer.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({ natsUrl: nats.url, models: inject("models"), engine: { contextSize: 256 } });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const encode = (value: unknown) =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
const valid = (hop: Hop) => ({
  version: WIRE_VERSION,
  type: hop,
  requestId: `bad-${hop}`,
  conversationId: "bad",
  adapter: hop === "route" ? "l0" : "chat",
  view: "user: hi\n",
  timeoutMs: 5_000,
});

/** Sends raw bytes and returns the error the node replied with (for answer: the stream's only part). */
async function sendRaw(hop: Hop, body: unknown): Promise<{ code: string; requestId?: string | undefined }> {
  if (hop !== "answer") {
    const msg = await t.client.request(buildHopSubject(hop), encode(body), { timeout: 5_000 });
    const reply = errorReplySchema.parse(JSON.parse(new TextDecoder().decode(msg.data)));
    return { code: reply.error.code, requestId: reply.requestId };
  }
  const parts = [];
  for await (const msg of await t.client.requestMany(buildHopSubject(hop), encode(body), {
    strategy: "sentinel",
    maxWait: 5_000,
  })) {
    if (msg.data.length === 0) break;
    parts.push(streamPartSchema.parse(JSON.parse(new TextDecoder().decode(msg.data))));
  }
  // Errors found while decoding come alone; errors found by the engine may follow the `start` part.
  expect(parts.length).toBeGreaterThanOrEqual(1);
  expect(parts.length).toBeLessThanOrEqual(2);
  expect(parts.map((p) => p.seq)).toEqual(parts.map((_, i) => i));
  const part = parts.at(-1);
  if (part?.type !== "error") throw new Error(`expected an error part, got ${part?.type}`);
  if (parts.length === 2) expect(parts[0]?.type).toBe("start");
  return { code: part.error.code };
}

const HUGE_VIEW = "word ".repeat(2_000);

describe.each<Hop>(["route", "answer", "summary"])("bad %s requests", (hop) => {
  it.each([
    ["malformed JSON", "{not json", "bad_request"],
    ["a JSON array", [1, 2], "bad_request"],
    ["a wrong version", { ...valid(hop), version: "molmesh.v0" }, "unsupported_version"],
    ["a missing view", { ...valid(hop), view: undefined }, "bad_request"],
    ["a missing deadline", { ...valid(hop), timeoutMs: undefined }, "bad_request"],
    ["a wrong type", { ...valid(hop), timeoutMs: "soon" }, "bad_request"],
    ["an unknown adapter", { ...valid(hop), adapter: "poetry" }, "unknown_adapter"],
    ["a view over the context", { ...valid(hop), view: HUGE_VIEW }, "context_length_exceeded"],
  ])("%s gets a typed error reply", async (_name, body, code) => {
    const logsBefore = t.logs.filter((l) => l.level === "warn").length;
    const reply = await sendRaw(hop, body);
    expect(reply.code).toBe(code);
    if (hop !== "answer" && typeof body === "object" && !Array.isArray(body) && code !== "bad_request") {
      expect(reply.requestId).toBe(`bad-${hop}`);
    }
    expect(t.logs.filter((l) => l.level === "warn").length).toBe(logsBefore + 1);
  });
});

describe("after bad input", () => {
  it("the node keeps serving and leaks no KV slot", async () => {
    const answer = await collectAnswer(
      t.client,
      answerInput("good", "chat", "user: still there?\nassistant:"),
    );
    expect(answer.finish.usage.completionTokens).toBeGreaterThan(0);
    for (const slots of t.engine.snapshot()) expect(slots.freeSlots).toBe(slots.totalSlots);
  });
});
