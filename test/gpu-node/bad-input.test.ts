import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  buildGenerateSubject,
  errorReplySchema,
  streamPartSchema,
  type GenerateRequestInput,
} from "../../schema/wire/v2/index.ts";
import { answerInput, collectAnswer, routeRequest, summaryRequest } from "../harness/generate-requests.ts";
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
/** The edge's three kinds of request: a route's choice, a streamed answer, a summary. */
type Kind = "route" | "answer" | "summary";
const valid = (kind: Kind): GenerateRequestInput & { requestId: string } => {
  const request =
    kind === "route"
      ? routeRequest({ slotKey: "bad", prompt: "user: hi\n", timeoutMs: 5_000 })
      : kind === "answer"
        ? answerInput("bad", "chat", "user: hi\n", { timeoutMs: 5_000 })
        : summaryRequest("bad", "chat", "user: hi\n", { timeoutMs: 5_000 });
  return { ...request, requestId: `bad-${kind}` };
};

/** Sends raw bytes and returns the error the node replied with (for answer: the stream's only part). */
async function sendRaw(kind: Kind, body: unknown): Promise<{ code: string; requestId?: string | undefined }> {
  if (kind !== "answer") {
    const msg = await t.client.request(buildGenerateSubject(), encode(body), { timeout: 5_000 });
    const reply = errorReplySchema.parse(JSON.parse(new TextDecoder().decode(msg.data)));
    return { code: reply.error.code, requestId: reply.requestId };
  }
  const parts = [];
  for await (const msg of await t.client.requestMany(buildGenerateSubject(), encode(body), {
    strategy: "sentinel",
    maxWait: 5_000,
  })) {
    if (msg.data.length === 0) break;
    const data: unknown = JSON.parse(new TextDecoder().decode(msg.data));
    // A request too malformed to say it wants a stream gets the one unstreamed error reply.
    if (parts.length === 0 && (data as { seq?: unknown }).seq === undefined) {
      return { code: errorReplySchema.parse(data).error.code };
    }
    parts.push(streamPartSchema.parse(data));
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

describe.each<Kind>(["route", "answer", "summary"])("bad %s requests", (kind) => {
  it.each([
    ["malformed JSON", "{not json", "bad_request"],
    ["a JSON array", [1, 2], "bad_request"],
    ["a wrong version", { ...valid(kind), version: "molmesh.v0" }, "unsupported_version"],
    ["a missing prompt", { ...valid(kind), prompt: undefined }, "bad_request"],
    ["a missing deadline", { ...valid(kind), timeoutMs: undefined }, "bad_request"],
    ["a wrong type", { ...valid(kind), timeoutMs: "soon" }, "bad_request"],
    ["an unknown field", { ...valid(kind), view: "user: hi" }, "bad_request"],
    ["an unknown adapter", { ...valid(kind), adapter: "poetry" }, "unknown_adapter"],
    ["an unknown adapter revision", { ...valid(kind), adapter: "chat@0000000000ff" }, "unknown_adapter"],
    ["a prompt over the context", { ...valid(kind), prompt: HUGE_VIEW }, "context_length_exceeded"],
  ])("%s gets a typed error reply", async (_name, body, code) => {
    const logsBefore = t.logs.filter((l) => l.level === "warn").length;
    const reply = await sendRaw(kind, body);
    expect(reply.code).toBe(code);
    if (kind !== "answer" && typeof body === "object" && !Array.isArray(body) && code !== "bad_request") {
      expect(reply.requestId).toBe(`bad-${kind}`);
    }
    expect(t.logs.filter((l) => l.level === "warn").length).toBe(logsBefore + 1);
  });
});

describe("a request of another wire version", () => {
  it("is refused with a clear error, never misread", async () => {
    // A v1 edge's route hop, sent to the v2 subject by hand (subjects carry the version, so it never arrives there
    // by itself).
    const v1Route = {
      version: "molmesh.v1",
      type: "route",
      requestId: "v1-route",
      conversationId: "bad",
      adapter: "l0",
      view: "user: hi\nlabel: ",
      timeoutMs: 5_000,
    };
    const msg = await t.client.request(buildGenerateSubject(), encode(v1Route), { timeout: 5_000 });
    const reply = errorReplySchema.parse(JSON.parse(new TextDecoder().decode(msg.data)));
    expect(reply.error.code).toBe("unsupported_version");
    expect(reply.error.message).toMatch(/molmesh\.v1.*molmesh\.v2/);
    expect(reply.requestId).toBe("v1-route");
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
