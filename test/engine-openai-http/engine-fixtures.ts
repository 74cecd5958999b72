import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import type { OpenAiHttpEngineOptions } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  createQueuedClock,
  interceptedFetch,
  llamaServerErrorResponse,
  llamaServerLoraList,
  llamaServerSlotList,
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

/**
 * A vLLM's LoRA endpoints, stateful as the real server is: it starts with `preloaded` (its `--lora-modules`),
 * `POST /v1/load_lora_adapter` adds one (400 "already been loaded" for a name it has), `POST
 * /v1/unload_lora_adapter` removes one (404 "cannot be found" for a name it lacks), `GET /v1/models` lists the
 * base and what it holds. Messages as vLLM's serving_models.py sends them.
 */
export function vllmInitHandlers(preloaded: ReadonlyArray<{ name: string; path: string }> = []) {
  const loras = new Map(preloaded.map(({ name, path }) => [name, path]));
  return [
    http.post(`${VLLM_URL}/v1/load_lora_adapter`, async ({ request }) => {
      const body = (await request.json()) as { lora_name: string; lora_path: string };
      if (loras.has(body.lora_name)) {
        const message =
          `The lora adapter '${body.lora_name}' has already been loaded. ` +
          "If you want to load the adapter in place, set 'load_inplace' to True.";
        return vllmErrorResponse(400, message, "InvalidUserInput");
      }
      loras.set(body.lora_name, body.lora_path);
      return new HttpResponse(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
    }),
    http.post(`${VLLM_URL}/v1/unload_lora_adapter`, async ({ request }) => {
      const body = (await request.json()) as { lora_name: string };
      if (!loras.delete(body.lora_name)) {
        return vllmErrorResponse(
          404,
          `The lora adapter '${body.lora_name}' cannot be found.`,
          "NotFoundError",
        );
      }
      return new HttpResponse(`Success: LoRA adapter '${body.lora_name}' removed successfully.`);
    }),
    http.get(`${VLLM_URL}/v1/models`, () =>
      HttpResponse.json(
        vllmModelList(
          BASE_MODEL,
          [...loras].map(([name, path]) => ({ name, path })),
        ),
      ),
    ),
  ];
}

/** What the vLLM in these tests was started with: `coding` under its --lora-modules name (see vllmOptions). */
export const DEFAULT_VLLM_LORAS = [{ name: "coding-v3", path: CODING_PATH }];

/** How the fake llama-server tells its slot count: `GET /slots` (the default), only `GET /props`, or neither. */
export type LlamaServerSlotReply = { count: number; from: "slots" | "props" } | "untold";

/**
 * A llama-server's start-up endpoints: `GET /lora-adapters` lists `paths`; `GET /slots` and `GET /props` tell
 * the slot count as `slots` says (with `--no-slots` /slots answers 501; an older build's /props lacks
 * `total_slots`).
 */
export function llamaServerInitHandlers(
  paths: readonly string[] = [CHAT_GGUF, FOREIGN_GGUF, CODING_GGUF],
  slots: LlamaServerSlotReply = { count: 4, from: "slots" },
) {
  const count = slots === "untold" ? 0 : slots.count;
  return [
    http.get(`${LLAMA_URL}/lora-adapters`, () => HttpResponse.json(llamaServerLoraList(paths))),
    http.get(`${LLAMA_URL}/slots`, () =>
      slots !== "untold" && slots.from === "slots"
        ? HttpResponse.json(llamaServerSlotList(count))
        : llamaServerErrorResponse(
            501,
            "This server does not support slots endpoint. Start it with `--slots`",
            "not_supported_error",
          ),
    ),
    http.get(`${LLAMA_URL}/props`, () =>
      HttpResponse.json({
        ...(slots === "untold" ? {} : { total_slots: count }),
        model_path: "/models/qwen2.5-0.5b-instruct-q8_0.gguf",
        chat_template: "",
      }),
    ),
  ];
}
