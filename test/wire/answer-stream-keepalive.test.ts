import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DeadlineExceededError,
  WIRE_VERSION,
  buildGenerateSubject,
  encodeWireMessage,
  type StreamPart,
} from "../../schema/wire/v2/index.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";
import { answerInput } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";

let nats: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url });
});
afterAll(async () => {
  await nc.close();
  await nats.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Body = StreamPart extends infer P ? (P extends StreamPart ? Omit<P, "version" | "seq"> : never) : never;

/** A node on `prefix` that sends `start`, then stays quiet for `quietMs` (keepalives or nothing), then finishes. */
function fakeNode(prefix: string, quietMs: number, keepalive: boolean) {
  nc.subscribe(buildGenerateSubject(prefix), {
    callback: (_error, msg) => {
      void (async () => {
        let seq = 0;
        const send = (part: Body) =>
          msg.respond(encodeWireMessage({ version: WIRE_VERSION, seq: seq++, ...part }));
        send({ type: "start", requestId: "r", nodeId: "fake", adapter: "chat", revision: "r1" });
        for (let waited = 0; waited < quietMs; waited += 250) {
          await sleep(250);
          if (keepalive) send({ type: "keepalive" });
        }
        send({ type: "text-delta", delta: "late but here" });
        send({
          type: "finish",
          finishReason: "stop",
          text: "late but here",
          usage: { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens: 3 },
          timings: { queueMs: 0, prefillMs: quietMs, decodeMs: 1, totalMs: quietMs + 1 },
        });
        msg.respond(new Uint8Array(0));
      })();
    },
  });
}

describe("the answer stream's keepalive parts", () => {
  it("keep a quiet stream alive past the stall timeout, and never reach the caller", async () => {
    fakeNode("kaalive", 1_500, true);
    const parts: string[] = [];
    for await (const part of streamGenerate(nc, answerInput("c1", "chat", "user: hi\nassistant:"), {
      subjectPrefix: "kaalive",
      firstPartTimeoutMs: 1_000,
      stallTimeoutMs: 600,
    })) {
      parts.push(part.type);
    }
    expect(parts).toEqual(["start", "text-delta", "finish"]);
  });

  it("without them, the same silence is a lost node within the stall timeout", async () => {
    fakeNode("kasilent", 1_500, false);
    const started = Date.now();
    const run = async () => {
      const parts = streamGenerate(nc, answerInput("c2", "chat", "user: hi\nassistant:"), {
        subjectPrefix: "kasilent",
        firstPartTimeoutMs: 1_000,
        stallTimeoutMs: 600,
      });
      for await (const part of parts) expect(part.type).not.toBe("finish");
    };
    await expect(run()).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(Date.now() - started).toBeLessThan(1_400);
  });
});
