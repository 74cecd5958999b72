import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { BadRequestError, EngineFailureError } from "../../schema/wire/v2/index.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  BASE_MODEL,
  CHAT_PATH,
  CODING_PATH,
  DEFAULT_VLLM_LORAS,
  generateRequest,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
  VLLM_URL,
} from "./engine-fixtures.ts";
import {
  createQueuedClock,
  sseResponse,
  toSseFrames,
  vllmCompletionPayloads,
  vllmErrorResponse,
} from "./fake-engine-replies.ts";

const { server, seen } = useMockEngineServer();

function completionHandler(bodies: unknown[], reply: Parameters<typeof vllmCompletionPayloads>[0]) {
  return http.post(`${VLLM_URL}/v1/completions`, async ({ request }) => {
    bodies.push({ body: await request.json(), auth: request.headers.get("authorization") });
    return sseResponse(toSseFrames(vllmCompletionPayloads(reply)));
  });
}

describe("vLLM init", () => {
  it("loads path adapters at runtime under versioned names, treats 'already loaded' as success, verifies /v1/models", async () => {
    const loadBodies: unknown[] = [];
    server.use(
      http.post(`${VLLM_URL}/v1/load_lora_adapter`, async ({ request }) => {
        loadBodies.push(await request.clone().json());
        return undefined;
      }),
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
    );
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const chat = engine.resolveAdapter("chat");
    expect(chat?.name).toMatch(/^chat@[0-9a-f]{12}$/);
    // `coding` keeps the name vLLM already serves it under (its --lora-modules name): "already loaded".
    expect(loadBodies).toEqual([
      { lora_name: chat?.name, lora_path: CHAT_PATH },
      { lora_name: "coding-v3", lora_path: CODING_PATH },
    ]);
    expect(seen).toEqual(["POST /v1/load_lora_adapter", "POST /v1/load_lora_adapter", "GET /v1/models"]);
    expect(engine.kind).toBe("vllm");
    expect(engine.baseModel.name).toBe(BASE_MODEL);
    expect(engine.adapters().map(({ id, lora }) => ({ id, lora }))).toEqual([
      { id: "l0", lora: false },
      { id: "chat", lora: true },
      { id: "coding", lora: true },
    ]);
    const revisions = engine.adapters().map((adapter) => adapter.revision);
    for (const revision of revisions) expect(revision).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(revisions).size).toBe(3);
    const again = await createOpenAiHttpEngine(vllmOptions());
    expect(again.adapters().map((adapter) => adapter.revision)).toEqual(revisions);
  });

  it("fails clearly when vLLM refuses to load a LoRA: the file is at fault (bad_request)", async () => {
    server.use(
      http.post(`${VLLM_URL}/v1/load_lora_adapter`, () =>
        vllmErrorResponse(404, "No adapter found for /srv/adapters/chat", "NotFoundError"),
      ),
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
    );
    const failure = createOpenAiHttpEngine(vllmOptions());
    await expect(failure).rejects.toBeInstanceOf(BadRequestError);
    await expect(failure).rejects.toThrow(/refused to load LoRA "chat@[0-9a-f]{12}".*No adapter found/);
  });

  it("fails when /v1/models does not list an adapter or lists it from another path", async () => {
    // Runtime loading off (FastAPI's bare 404): only what the server was started with is served.
    server.use(
      http.post(`${VLLM_URL}/v1/load_lora_adapter`, () =>
        HttpResponse.json({ detail: "Not Found" }, { status: 404 }),
      ),
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
    );
    const notListed = createOpenAiHttpEngine(vllmOptions());
    await expect(notListed).rejects.toBeInstanceOf(EngineFailureError);
    await expect(notListed).rejects.toThrow(
      /does not serve LoRA "chat@[0-9a-f]{12}".*VLLM_ALLOW_RUNTIME_LORA_UPDATING/,
    );
    server.resetHandlers();
    server.use(...vllmInitHandlers([{ name: "coding-v3", path: "/old/coding" }]));
    await expect(createOpenAiHttpEngine(vllmOptions())).rejects.toThrow(/from \/old\/coding, not/);
  });
});

describe("vLLM generate", () => {
  it("names the LoRA in `model`, streams deltas and maps usage with cached tokens", async () => {
    const bodies: unknown[] = [];
    server.use(
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
      completionHandler(bodies, {
        model: "coding-v3",
        pieces: ["Hel", "lo", " world"],
        finishReason: "stop",
        usage: { prompt: 120, completion: 3, cached: 96 },
      }),
    );
    const engine = await createOpenAiHttpEngine(vllmOptions({ now: createQueuedClock([1000, 1040, 1100]) }));
    const deltas: string[] = [];
    const result = await engine.generate(
      generateRequest({ adapter: "coding", topK: 0, onTextDelta: (delta) => deltas.push(delta) }),
    );
    expect(bodies).toEqual([
      {
        auth: "Bearer sk-node-1",
        body: {
          model: "coding-v3",
          prompt: generateRequest().prompt,
          stream: true,
          stream_options: { include_usage: true },
          max_tokens: 64,
          temperature: 0.7,
          top_p: 0.95,
          top_k: -1,
          stop: ["<|user|>"],
          seed: 7,
          // generateRequest() names no tenant: a fixed salt, never none (tenant-isolation.test.ts).
          cache_salt: "mol-untenanted",
        },
      },
    ]);
    expect(deltas).toEqual(["Hel", "lo", " world"]);
    expect(result).toEqual({
      text: "Hello world",
      finishReason: "stop",
      usage: { promptTokens: 120, cachedPromptTokens: 96, evaluatedPromptTokens: 24, completionTokens: 3 },
      queueMs: 0,
      prefillMs: 40,
      decodeMs: 60,
    });
  });

  it("uses the base model name for a bare-base adapter and compiles choices to structured_outputs", async () => {
    const bodies: Array<{ body: Record<string, unknown> }> = [];
    server.use(
      ...vllmInitHandlers(DEFAULT_VLLM_LORAS),
      completionHandler(bodies, {
        model: BASE_MODEL,
        pieces: ["gen", "ui"],
        finishReason: "length",
        usage: { prompt: 50, completion: 2, cached: null },
      }),
    );
    const engine = await createOpenAiHttpEngine(vllmOptions());
    const result = await engine.generate(
      generateRequest({ adapter: "l0", constraint: { type: "choice", choices: ["chat", "agent", "genui"] } }),
    );
    const [sent] = bodies;
    expect(sent?.body["model"]).toBe(BASE_MODEL);
    expect(sent?.body["structured_outputs"]).toEqual({ choice: ["chat", "agent", "genui"] });
    expect(sent?.body).not.toHaveProperty("lora");
    expect(sent?.body).not.toHaveProperty("grammar");
    expect(result.text).toBe("genui");
    expect(result.finishReason).toBe("length");
    // Without --enable-prompt-tokens-details vLLM sends prompt_tokens_details: null.
    expect(result.usage).toEqual({
      promptTokens: 50,
      cachedPromptTokens: 0,
      evaluatedPromptTokens: 50,
      completionTokens: 2,
    });
  });
});
