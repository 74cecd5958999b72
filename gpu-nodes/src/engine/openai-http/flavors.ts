import { stripSpecialSentinels } from "../../../../schema/harness/chat-templates.ts";
import { EngineFailureError, type AdapterId } from "../../../../schema/wire/v2/index.ts";
import type { AdapterName } from "../../../../schema/wire/v2/adapter-name.ts";
import type { EngineGenerateRequest } from "../engine.ts";
import type { CompletionBody } from "./completion-stream.ts";
import type { EngineHttpClient } from "./engine-http-client.ts";

/**
 * What differs between the OpenAI-compatible servers molmesh drives: how a LoRA is made ready and selected
 * (vLLM loads and unloads it at run time and picks it by `model`; llama-server holds its LoRAs from start-up and
 * picks one by a per-request `lora` list), and how output is constrained. vllm-flavor.ts and
 * llama-server-flavor.ts implement it.
 */
export interface OpenAiHttpFlavor {
  readonly name: OpenAiHttpFlavorName;
  /** Runs once before serving: checks what the server offers and returns what serves with it. */
  connect(client: EngineHttpClient, setup: FlavorSetup): Promise<FlavorConnection>;
}

export type OpenAiHttpFlavorName = "vllm" | "llama-server";

export interface FlavorSetup {
  /** The served base model name (vLLM `--served-model-name`, or the model id `/v1/models` lists). */
  baseModel: string;
  /** vLLM: the node-side secret each tenant's `cache_salt` is derived from (tenant-cache.ts). */
  cacheSaltSecret: string;
  /** Reports a degraded but working setup once (llama-server without a readable slot count). */
  warn: (message: string) => void;
}

/** One adapter revision to make servable; the engine has named it already. */
export interface AdapterToServe {
  label: AdapterId;
  name: AdapterName;
  /** LoRA location as the server sees it; absent = the bare base. */
  path: string | undefined;
  scale: number;
  /** vLLM: the LoRA name the server serves it under (its `--lora-modules` name), default `name`. */
  servedName?: string | undefined;
}

export interface FlavorConnection {
  /**
   * Makes adapters servable, each resolved to a route, or throws a typed error (`bad_request`: the server
   * cannot serve that file; `engine_failure`: the server is unreachable or misconfigured).
   */
  prepare(adapters: readonly AdapterToServe[]): Promise<AdapterRoute[]>;
  /** Lets go of an adapter no request uses any more (vLLM frees its weights; llama-server keeps them). */
  release(adapter: AdapterToServe): Promise<void>;
  /**
   * A raw `/v1/completions` request: the adapter's view is the exact prompt, so no chat template applies. It
   * also carries the request's cache isolation (vLLM `cache_salt`, llama-server `id_slot`).
   */
  buildCompletionBody(route: AdapterRoute, request: EngineGenerateRequest): Promise<CompletionBody>;
}

/** How a request reaches one adapter revision on the engine server. */
export interface AdapterRoute {
  /** The OpenAI `model` field: the LoRA name on vLLM, the base model otherwise. */
  model: string;
  /** llama-server only: the LoRA (as the server lists it) this adapter turns on, and its scale. */
  lora?: { path: string; scale: number } | undefined;
}

const FINGERPRINT_HEX_CHARS = 16;

/**
 * A revision for weights the node cannot read: a digest of what identifies them from here (flavor, base,
 * path), equal on every node serving the same files.
 */
export async function computeFingerprint(parts: readonly string[]): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, FINGERPRINT_HEX_CHARS);
}

/** The fields both servers read the same way; `topK` is passed in because they spell "off" differently. */
export function buildSharedBody(
  route: AdapterRoute,
  request: EngineGenerateRequest,
  topK: number,
): CompletionBody {
  const body: CompletionBody = {
    model: route.model,
    // These servers parse special-token text in the prompt themselves: the template's specials come through, but
    // so would a user's typed `<|im_start|>` (a documented limitation of the HTTP engines; llama.cpp has none).
    prompt: stripSpecialSentinels(request.prompt),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    top_k: topK,
    stop: [...request.stop],
  };
  if (request.seed !== undefined) body["seed"] = request.seed;
  return body;
}

/** Sends a control request (list, load, unload); a network failure is the server's, so `engine_failure`. */
export async function sendOrFail(
  server: string,
  action: () => Promise<Response>,
  what: string,
): Promise<Response> {
  try {
    return await action();
  } catch (cause) {
    throw new EngineFailureError(`could not reach ${server} to ${what}`, { cause });
  }
}
