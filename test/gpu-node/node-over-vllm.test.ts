import { connect, type NatsConnection } from "@nats-io/transport-node";
import { http } from "msw";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineFailureError } from "../../schema/wire/v2/index.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import { startGpuNode, type GpuNode } from "../../gpu-nodes/src/service/start-gpu-node.ts";
import { requestRoute } from "../harness/generate-requests.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";
import { answerInput, collectAnswer } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { createMemoryLogger } from "../harness/start-test-node.ts";
import {
  DEFAULT_VLLM_LORAS,
  VLLM_URL,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
} from "../engine-openai-http/engine-fixtures.ts";
import {
  frameStream,
  sseResponse,
  toSseFrames,
  vllmCompletionPayloads,
} from "../engine-openai-http/fake-engine-replies.ts";

// The same node service, driving vLLM (replayed by msw) instead of llama.cpp: the service cannot tell.
const { server } = useMockEngineServer();
let nats: NatsServerHandle;
let nodeNc: NatsConnection;
let client: NatsConnection;
let node: GpuNode;

beforeAll(async () => {
  nats = await startNatsServer();
  server.use(...vllmInitHandlers(DEFAULT_VLLM_LORAS));
  const engine = await createOpenAiHttpEngine(vllmOptions({ now: () => performance.now() }));
  nodeNc = await connect({ servers: nats.url });
  client = await connect({ servers: nats.url });
  node = await startGpuNode({
    nc: nodeNc,
    engine,
    nodeId: "vllm-node",
    logger: createMemoryLogger().logger,
    now: () => performance.now(),
    clock: () => Date.now(),
  });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await node?.stop(0);
  await Promise.allSettled([client?.close(), nodeNc?.close()]);
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const completion = (pieces: string[], cached: number | null, model = "chat") =>
  toSseFrames(
    vllmCompletionPayloads({
      model,
      pieces,
      finishReason: "stop",
      usage: { prompt: 40, completion: pieces.length, cached },
    }),
  );

describe("GPU node over vLLM", () => {
  it("routes with structured_outputs.choice and reports the label", async () => {
    const bodies: unknown[] = [];
    server.use(
      http.post(`${VLLM_URL}/v1/completions`, async ({ request }) => {
        bodies.push(await request.json());
        return sseResponse(completion(["cod", "ing"], 32, "qwen2.5-0.5b"));
      }),
    );
    const result = await requestRoute(client, {
      requestId: "vllm-route",
      slotKey: "c",
      prompt: "user: fix my bug\nlabel:",
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ label: "coding", nodeId: "vllm-node" });
    expect(result.usage).toMatchObject({
      promptTokens: 40,
      cachedPromptTokens: 32,
      evaluatedPromptTokens: 8,
    });
    expect(bodies[0]).toMatchObject({ structured_outputs: { choice: ["chat", "agent", "coding", "genui"] } });
  });

  it("streams an answer over NATS with the engine's cached-token figures", async () => {
    server.use(
      http.post(`${VLLM_URL}/v1/completions`, () => sseResponse(completion(["Hel", "lo", "!"], 24))),
    );
    const answer = await collectAnswer(client, answerInput("c", "chat", "user: hi\nassistant:"));
    expect(answer.deltas).toEqual(["Hel", "lo", "!"]);
    expect(answer.finish.usage).toMatchObject({
      promptTokens: 40,
      cachedPromptTokens: 24,
      completionTokens: 3,
    });
  });

  it("a stream that breaks mid-way ends the hop with engine_failure after the text already sent", async () => {
    const frames = completion(["partial ", "answer"], 0).slice(0, 2);
    server.use(
      http.post(`${VLLM_URL}/v1/completions`, () =>
        sseResponse(frameStream(frames, { kind: "error", error: new Error("connection reset") })),
      ),
    );
    const deltas: string[] = [];
    const run = (async () => {
      for await (const part of streamGenerate(client, answerInput("c", "chat", "user: hi\nassistant:"))) {
        if (part.type === "text-delta") deltas.push(part.delta);
      }
    })();
    await expect(run).rejects.toBeInstanceOf(EngineFailureError);
    expect(deltas).toEqual(["partial ", "answer"]);
  });
});
