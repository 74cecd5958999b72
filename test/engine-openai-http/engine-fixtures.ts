import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import type { OpenAiHttpEngineOptions } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  createQueuedClock,
  interceptedFetch,
  llamaServerLoraList,
  vllmErrorResponse,
  vllmModelList,
} from "./fake-engine-replies.ts";

export const VLLM_URL = "http://vllm.test:8000";
export const LLAMA_URL = "http://llama-server.test:8080";
export const BASE_MODEL = "qwen2.5-0.5b";
export const CHAT_PATH = "/srv/adapters/chat";
export const CODING_PATH = "/srv/adapters/coding";
export const CHAT_GGUF = "/srv/adapters/chat.gguf";
export const CODING_GGUF = "/srv/adapters/coding.gguf";
/** A LoRA llama-server holds that molmesh does not use: requests must still pin it to 0. */
export const FOREIGN_GGUF = "/srv/adapters/other-team.gguf";

/** Starts msw for the file and records every request that reaches it as "METHOD /path". */
export function useMockEngineServer() {
  const server = setupServer();
  const seen: string[] = [];
  server.events.on("request:start", ({ request }) => {
    seen.push(`${request.method} ${new URL(request.url).pathname}`);
  });
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  beforeEach(() => {
    seen.length = 0;
  });
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return { server, seen };
}

export function vllmOptions(overrides: Partial<OpenAiHttpEngineOptions> = {}): OpenAiHttpEngineOptions {
  return {
    flavor: "vllm",
    baseUrl: `${VLLM_URL}/`,
    apiKey: "sk-node-1",
    baseModel: BASE_MODEL,
    adapters: [
      { id: "l0" },
      { id: "chat", path: CHAT_PATH },
      { id: "coding", path: CODING_PATH, name: "coding-v3" },
    ],
    fetch: interceptedFetch,
    now: createQueuedClock([1000]),
    warmSlotsPerAdapter: 2,
    ...overrides,
  };
}

export function llamaServerOptions(
  overrides: Partial<OpenAiHttpEngineOptions> = {},
): OpenAiHttpEngineOptions {
  return {
    flavor: "llama-server",
    baseUrl: LLAMA_URL,
    baseModel: BASE_MODEL,
    adapters: [
      { id: "l0" },
      { id: "chat", path: CHAT_GGUF },
      { id: "coding", path: CODING_GGUF, scale: 0.75 },
    ],
    fetch: interceptedFetch,
    now: createQueuedClock([1000]),
    warmSlotsPerAdapter: 2,
    ...overrides,
  };
}

export function generateRequest(overrides: Partial<EngineGenerateRequest> = {}): EngineGenerateRequest {
  return {
    adapter: "chat",
    conversationId: "conv-1",
    prompt: "<|system|>You are helpful.<|user|>Hi<|assistant|>",
    maxTokens: 64,
    temperature: 0.7,
    topP: 0.95,
    topK: 40,
    seed: 7,
    stop: ["<|user|>"],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** vLLM init endpoints; names in `alreadyLoaded` answer the real "already been loaded" 400. */
export function vllmInitHandlers(
  loras: ReadonlyArray<{ name: string; path: string }>,
  alreadyLoaded: string[] = [],
) {
  return [
    http.post(`${VLLM_URL}/v1/load_lora_adapter`, async ({ request }) => {
      const body = (await request.json()) as { lora_name: string };
      if (alreadyLoaded.includes(body.lora_name)) {
        const message =
          `The lora adapter '${body.lora_name}' has already been loaded. ` +
          "If you want to load the adapter in place, set 'load_inplace' to True.";
        return vllmErrorResponse(400, message, "InvalidUserInput");
      }
      return new HttpResponse(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
    }),
    http.get(`${VLLM_URL}/v1/models`, () => HttpResponse.json(vllmModelList(BASE_MODEL, loras))),
  ];
}

export const DEFAULT_VLLM_LORAS = [
  { name: "chat", path: CHAT_PATH },
  { name: "coding-v3", path: CODING_PATH },
];

export function llamaServerInitHandler(paths: readonly string[] = [CHAT_GGUF, FOREIGN_GGUF, CODING_GGUF]) {
  return http.get(`${LLAMA_URL}/lora-adapters`, () => HttpResponse.json(llamaServerLoraList(paths)));
}
