import { http } from "msw";
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../schema/wire/v2/index.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  BASE_MODEL,
  CHAT_GGUF,
  generateRequest,
  LLAMA_URL,
  llamaServerInitHandlers,
  llamaServerOptions,
  useMockEngineServer,
} from "./engine-fixtures.ts";
import {
  createQueuedClock,
  llamaServerCompletionPayloads,
  sseResponse,
  toSseFrames,
} from "./fake-engine-replies.ts";

const { server, seen } = useMockEngineServer();

function completionHandler(
  bodies: Array<Record<string, unknown>>,
  reply: Parameters<typeof llamaServerCompletionPayloads>[0],
) {
  return http.post(`${LLAMA_URL}/v1/completions`, async ({ request }) => {
    bodies.push((await request.json()) as Record<string, unknown>);
    return sseResponse(toSseFrames(llamaServerCompletionPayloads(reply)));
  });
}

describe("llama-server init", () => {
  it("maps adapter paths to llama-server LoRA ids from GET /lora-adapters", async () => {
    server.use(...llamaServerInitHandlers());
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    expect(seen).toEqual(["GET /slots", "GET /lora-adapters"]);
    expect(engine.kind).toBe("llama-server");
    expect(engine.adapters().map(({ id, lora }) => ({ id, lora }))).toEqual([
      { id: "l0", lora: false },
      { id: "chat", lora: true },
      { id: "coding", lora: true },
    ]);
    expect(engine.adapters().find((adapter) => adapter.id === "l0")?.revision).toMatch(/^[0-9a-f]{16}$/);
  });

  it("fails clearly when llama-server was started without an adapter", async () => {
    server.use(...llamaServerInitHandlers([CHAT_GGUF]));
    const failure = createOpenAiHttpEngine(llamaServerOptions());
    await expect(failure).rejects.toBeInstanceOf(BadRequestError);
    await expect(failure).rejects.toThrow(
      /no LoRA for adapter "coding" \(\/srv\/adapters\/coding\.gguf\).*--lora/,
    );
  });
});

describe("llama-server generate", () => {
  it("lists every server LoRA with explicit zeros, keeps the prompt cache and reads usage", async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      ...llamaServerInitHandlers(),
      completionHandler(bodies, {
        pieces: ["def", " add", "(a, b)"],
        finishReason: "stop",
        usage: { prompt: 200, completion: 3, cached: 180 },
        timings: { cache_n: 180, prompt_n: 20, predicted_n: 3 },
      }),
    );
    const engine = await createOpenAiHttpEngine(llamaServerOptions({ now: createQueuedClock([0, 25, 55]) }));
    const deltas: string[] = [];
    const result = await engine.generate(
      generateRequest({ adapter: "coding", topK: 0, onTextDelta: (delta) => deltas.push(delta) }),
    );
    expect(bodies).toEqual([
      {
        model: BASE_MODEL,
        prompt: generateRequest().prompt,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 64,
        temperature: 0.7,
        top_p: 0.95,
        top_k: 0,
        stop: ["<|user|>"],
        seed: 7,
        lora: [
          { id: 0, scale: 0 },
          { id: 1, scale: 0 },
          { id: 2, scale: 0.75 },
        ],
        cache_prompt: true,
        // Which slot is tenant-isolation.test.ts's to check.
        id_slot: expect.any(Number) as number,
      },
    ]);
    expect(deltas).toEqual(["def", " add", "(a, b)"]);
    expect(result).toEqual({
      text: "def add(a, b)",
      finishReason: "stop",
      usage: { promptTokens: 200, cachedPromptTokens: 180, evaluatedPromptTokens: 20, completionTokens: 3 },
      queueMs: 0,
      prefillMs: 25,
      decodeMs: 30,
    });
  });

  it("zeroes every LoRA for a bare-base adapter and compiles choices to an escaped GBNF grammar", async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      ...llamaServerInitHandlers(),
      completionHandler(bodies, {
        pieces: ["chat"],
        finishReason: "stop",
        usage: { prompt: 10, completion: 1, cached: 0 },
        timings: { cache_n: 0, prompt_n: 10, predicted_n: 1 },
      }),
    );
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    await engine.generate(
      generateRequest({
        adapter: "l0",
        constraint: { type: "choice", choices: ["chat", 'say "hi"', "a\\b"] },
      }),
    );
    expect(bodies[0]?.["lora"]).toEqual([
      { id: 0, scale: 0 },
      { id: 1, scale: 0 },
      { id: 2, scale: 0 },
    ]);
    expect(bodies[0]?.["grammar"]).toBe('root ::= "chat" | "say \\"hi\\"" | "a\\\\b"');
    expect(bodies[0]).not.toHaveProperty("structured_outputs");
  });

  it("falls back to llama-server timings when the stream carries no OpenAI usage", async () => {
    server.use(
      ...llamaServerInitHandlers(),
      completionHandler([], {
        pieces: ["ok"],
        finishReason: "length",
        timings: { cache_n: 30, prompt_n: 12, predicted_n: 1 },
      }),
    );
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    const result = await engine.generate(generateRequest({ adapter: "chat" }));
    expect(result.finishReason).toBe("length");
    expect(result.usage).toEqual({
      promptTokens: 42,
      cachedPromptTokens: 30,
      evaluatedPromptTokens: 12,
      completionTokens: 1,
    });
  });

  it("parses SSE frames split across arbitrary network reads", async () => {
    const payloads = llamaServerCompletionPayloads({
      pieces: ["é", "漢", "字"],
      finishReason: "stop",
      usage: { prompt: 5, completion: 3, cached: 0 },
      timings: { cache_n: 0, prompt_n: 5, predicted_n: 3 },
    });
    const bytes = new TextEncoder().encode(toSseFrames(payloads).join(""));
    server.use(
      ...llamaServerInitHandlers(),
      http.post(`${LLAMA_URL}/v1/completions`, () => {
        let offset = 0;
        // 7-byte reads cut frames and multi-byte characters in half.
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (offset >= bytes.length) {
              controller.close();
              return;
            }
            controller.enqueue(bytes.slice(offset, offset + 7));
            offset += 7;
          },
        });
        return sseResponse(body);
      }),
    );
    const engine = await createOpenAiHttpEngine(llamaServerOptions());
    const result = await engine.generate(generateRequest({ adapter: "chat" }));
    expect(result.text).toBe("é漢字");
    expect(result.usage.completionTokens).toBe(3);
  });
});
