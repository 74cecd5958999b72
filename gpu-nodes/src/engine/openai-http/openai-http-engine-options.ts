import type { AdapterId } from "../../../../schema/wire/v1/index.ts";

export type OpenAiHttpFlavor = "vllm" | "llama-server";

export interface OpenAiHttpAdapterOption {
  /** molmesh adapter id (l0, chat, agent, …). */
  id: AdapterId;
  /** LoRA location as the engine server sees it; absent = the adapter runs on the bare base model. */
  path?: string;
  /** vLLM: the served LoRA name (defaults to `id`). llama-server matches adapters by path instead. */
  name?: string;
  /** llama-server: scale of this LoRA when it is the chosen one (default 1). vLLM has no per-request scale. */
  scale?: number;
}

export interface OpenAiHttpEngineOptions {
  flavor: OpenAiHttpFlavor;
  /** Server root, without `/v1` (e.g. `http://10.0.0.5:8000`). */
  baseUrl: string;
  apiKey?: string;
  /** The served base model name (vLLM `--served-model-name`, or the model id `/v1/models` lists). */
  baseModel: string;
  adapters: readonly OpenAiHttpAdapterOption[];
  /** Injected so the engine stays runtime-agnostic and tests can intercept it. */
  fetch: typeof fetch;
  /** Injected clock in milliseconds, for prefill/decode timings. */
  now: () => number;
  /** How many recently served conversations per adapter `snapshot()` reports as warm. */
  warmSlotsPerAdapter: number;
}
