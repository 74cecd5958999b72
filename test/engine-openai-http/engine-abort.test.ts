import { delay, http } from "msw";
import { describe, expect, it } from "vitest";
import { CancelledError, DeadlineExceededError, EngineFailureError } from "../../schema/wire/v2/index.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  DEFAULT_VLLM_LORAS,
  generateRequest,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
  VLLM_URL,
} from "./engine-fixtures.ts";
import { frameStream, sseResponse, toSseFrames, vllmCompletionPayloads } from "./fake-engine-replies.ts";

const { server, seen } = useMockEngineServer();

const firstChunks = vllmCompletionPayloads({
  model: "chat",
  pieces: ["Thinking", " about", " it"],
  finishReason: "stop",
  usage: { prompt: 9, completion: 3, cached: 0 },
}).slice(0, 2);

/** The engine keeps decoding until molmesh hangs up: the body never ends on its own. */
async function createHangingEngine() {
  server.use(
    ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
    http.post(`${VLLM_URL}/v1/completions`, () =>
      sseResponse(frameStream(toSseFrames(firstChunks, false), { kind: "hang" })),
    ),
  );
  return createOpenAiHttpEngine(vllmOptions());
}

describe("abort", () => {
  it("rejects with CancelledError when aborted mid-stream without a typed reason", async () => {
    const engine = await createHangingEngine();
    const controller = new AbortController();
    const deltas: string[] = [];
    const generation = engine.generate(
      generateRequest({
        signal: controller.signal,
        onTextDelta: (delta) => {
          deltas.push(delta);
          if (deltas.length === 2) controller.abort();
        },
      }),
    );
    await expect(generation).rejects.toBeInstanceOf(CancelledError);
    expect(deltas).toEqual(["Thinking", " about"]);
    expect(engine.snapshot().find((slots) => slots.adapter === "chat")?.freeSlots).toBe(2);
  });

  it("rejects with the signal's own MolWireError reason", async () => {
    const engine = await createHangingEngine();
    const controller = new AbortController();
    const deadline = new DeadlineExceededError("hop deadline passed");
    const generation = engine.generate(
      generateRequest({ signal: controller.signal, onTextDelta: () => controller.abort(deadline) }),
    );
    await expect(generation).rejects.toBe(deadline);
  });

  it("aborts while waiting for the response headers", async () => {
    server.use(
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
      http.post(`${VLLM_URL}/v1/completions`, async () => {
        await delay("infinite");
        return sseResponse([]);
      }),
    );
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const controller = new AbortController();
    const generation = engine.generate(generateRequest({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 30);
    await expect(generation).rejects.toBeInstanceOf(CancelledError);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const engine = await createHangingEngine();
    seen.length = 0;
    const controller = new AbortController();
    controller.abort();
    await expect(engine.generate(generateRequest({ signal: controller.signal }))).rejects.toBeInstanceOf(
      CancelledError,
    );
    expect(seen).toEqual([]);
  });

  it("close() ends in-flight generations with EngineFailureError and refuses new ones", async () => {
    const engine = await createHangingEngine();
    let closing: Promise<void> | undefined;
    const generation = engine.generate(
      generateRequest({
        onTextDelta: () => {
          closing ??= engine.close();
        },
      }),
    );
    await expect(generation).rejects.toBeInstanceOf(EngineFailureError);
    await closing;
    await expect(engine.generate(generateRequest())).rejects.toThrow(/closed/);
  });
});
