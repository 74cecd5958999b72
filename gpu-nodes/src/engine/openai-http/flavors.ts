import { z } from "zod";
import { stripSpecialSentinels } from "../../../../schema/harness/chat-templates.ts";
import { EngineFailureError, UnknownAdapterError, type AdapterId } from "../../../../schema/wire/v2/index.ts";
import { toStrictJsonSchema } from "../../../../schema/tools/json-schema-convert.ts";
import { buildChoiceGrammar, type EngineConstraint, type EngineGenerateRequest } from "../engine.ts";
import type { CompletionBody } from "./completion-stream.ts";
import { readErrorBody, type EngineHttpClient } from "./engine-http-client.ts";

/**
 * What differs between the OpenAI-compatible servers molmesh drives: how a LoRA is selected and made
 * ready (vLLM loads it at runtime and picks it by `model`; llama-server holds it from start-up and picks it
 * by a per-request `lora` list), how output is constrained, and what identifies the weights served.
 */
export interface OpenAiHttpFlavor {
  readonly name: OpenAiHttpFlavorName;
  /** Runs once before serving: every adapter resolved to a route and a revision, or a typed error. */
  prepareAdapters(client: EngineHttpClient, setup: FlavorSetup): Promise<ServedAdapter[]>;
  /** A raw `/v1/completions` request: the adapter's view is the exact prompt, so no chat template applies. */
  buildCompletionBody(route: AdapterRoute, request: EngineGenerateRequest): CompletionBody;
}

export type OpenAiHttpFlavorName = "vllm" | "llama-server";

export interface OpenAiHttpAdapterOption {
  /** molmesh adapter id (l0, chat, agent, …). */
  id: AdapterId;
  /** LoRA location as the engine server sees it; absent = the adapter runs on the bare base model. */
  path?: string | undefined;
  /** vLLM: the served LoRA name (defaults to `id`). llama-server matches adapters by path instead. */
  name?: string;
  /** llama-server: scale of this LoRA when it is the chosen one (default 1). vLLM has no per-request scale. */
  scale?: number;
}

export interface FlavorSetup {
  /** The served base model name (vLLM `--served-model-name`, or the model id `/v1/models` lists). */
  baseModel: string;
  adapters: readonly OpenAiHttpAdapterOption[];
}

/** One llama-server LoRA and the scale a request gives it. */
export interface LoraScale {
  id: number;
  scale: number;
}

/** How a request reaches one molmesh adapter on the engine server, resolved once at init. */
export interface AdapterRoute {
  /** The OpenAI `model` field: the LoRA name on vLLM, the base model otherwise. */
  model: string;
  /** llama-server only: every LoRA the server holds, all at 0 but the chosen one. */
  lora?: readonly LoraScale[];
}

export interface ServedAdapter {
  id: AdapterId;
  lora: boolean;
  revision: string;
  route: AdapterRoute;
}

const FINGERPRINT_HEX_CHARS = 16;

/**
 * The remote server does not expose weight hashes, so the revision is a digest of what identifies the
 * weights from here (flavor, base, served name, path): equal on every node serving the same files.
 */
export async function computeFingerprint(parts: readonly string[]): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, FINGERPRINT_HEX_CHARS);
}

/** The fields both servers read the same way; `topK` is passed in because they spell "off" differently. */
function buildSharedBody(route: AdapterRoute, request: EngineGenerateRequest, topK: number): CompletionBody {
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

// ---- vLLM --------------------------------------------------------------------------------------------

const modelListSchema = z.object({
  data: z.array(z.object({ id: z.string(), root: z.string().nullish(), parent: z.string().nullish() })),
});
type ModelCard = z.infer<typeof modelListSchema>["data"][number];

async function sendOrFail(action: () => Promise<Response>, what: string): Promise<Response> {
  try {
    return await action();
  } catch (cause) {
    throw new EngineFailureError(`could not reach vLLM to ${what}`, { cause });
  }
}

async function loadAdapter(client: EngineHttpClient, name: string, path: string): Promise<void> {
  const body = { lora_name: name, lora_path: path };
  const what = `load LoRA "${name}"`;
  const response = await sendOrFail(
    () => client.send("/v1/load_lora_adapter", { method: "POST", body }),
    what,
  );
  if (response.ok) return;
  const error = readErrorBody(await response.text());
  // Adapters from --lora-modules or an earlier run: "The lora adapter 'x' has already been loaded." (400).
  if (response.status === 400 && /already been loaded/i.test(error.message)) return;
  // FastAPI's bare 404 means the route is off (no VLLM_ALLOW_RUNTIME_LORA_UPDATING): the adapter may still
  // come from --lora-modules, which the /v1/models check below decides.
  if (response.status === 404 && error.type === undefined && error.message === "Not Found") return;
  throw new UnknownAdapterError(
    `vLLM refused to load LoRA "${name}" from ${path} (${response.status}): ${error.message}`,
  );
}

async function listModels(client: EngineHttpClient): Promise<ModelCard[]> {
  const response = await sendOrFail(() => client.send("/v1/models", { method: "GET" }), "list models");
  if (!response.ok) throw new EngineFailureError(`vLLM /v1/models answered ${response.status}`);
  const parsed = modelListSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success)
    throw new EngineFailureError("vLLM /v1/models sent an unexpected body", { cause: parsed.error });
  return parsed.data.data;
}

function requireLora(cards: readonly ModelCard[], name: string, path: string, baseModel: string): void {
  const card = cards.find((candidate) => candidate.id === name);
  const served = cards.map((candidate) => candidate.id).join(", ");
  if (card === undefined) {
    throw new UnknownAdapterError(
      `vLLM does not serve LoRA "${name}" (${path}); it serves: ${served}. Start it with --enable-lora and ` +
        `--lora-modules ${name}=${path}, or set VLLM_ALLOW_RUNTIME_LORA_UPDATING=True.`,
    );
  }
  // Same name, other weights (a stale adapter from an earlier deploy) would answer with the wrong LoRA.
  if (card.root && card.root !== path) {
    throw new UnknownAdapterError(
      `vLLM serves LoRA "${name}" from ${card.root}, not ${path}; unload it first`,
    );
  }
  if (card.parent && card.parent !== baseModel) {
    throw new UnknownAdapterError(`vLLM serves LoRA "${name}" on base "${card.parent}", not "${baseModel}"`);
  }
}

/** Loads every LoRA at runtime (idempotent), then checks /v1/models really serves base and adapters. */
async function prepareVllmAdapters(client: EngineHttpClient, options: FlavorSetup): Promise<ServedAdapter[]> {
  for (const adapter of options.adapters) {
    if (adapter.path !== undefined) await loadAdapter(client, adapter.name ?? adapter.id, adapter.path);
  }
  const cards = await listModels(client);
  if (!cards.some((card) => card.id === options.baseModel)) {
    const served = cards.map((card) => card.id).join(", ");
    throw new UnknownAdapterError(
      `vLLM does not serve base model "${options.baseModel}"; it serves: ${served}`,
    );
  }
  const baseRevision = await computeFingerprint(["vllm", options.baseModel]);
  return Promise.all(
    options.adapters.map(async (adapter): Promise<ServedAdapter> => {
      if (adapter.path === undefined) {
        return { id: adapter.id, lora: false, revision: baseRevision, route: { model: options.baseModel } };
      }
      const name = adapter.name ?? adapter.id;
      requireLora(cards, name, adapter.path, options.baseModel);
      const revision = await computeFingerprint(["vllm", options.baseModel, name, adapter.path]);
      return { id: adapter.id, lora: true, revision, route: { model: name } };
    }),
  );
}

/**
 * vLLM's `structured_outputs` (its completions API). A `tools` constraint reaches here as `required` only: the
 * engine has put the marker at the end of the prompt, so what is left to decode is one call (or a list).
 */
function vllmStructuredOutputs(constraint: EngineConstraint): Record<string, unknown> {
  switch (constraint.type) {
    case "choice":
      return { choice: [...constraint.choices] };
    case "json_schema":
      return { json: toStrictJsonSchema(constraint.schema) };
    case "json_object":
      return { json_object: true };
    case "tools":
      return { json: toStrictJsonSchema(constraint.callSchema) };
    case "grammar":
      return { grammar: constraint.gbnf };
  }
}

export const vllmFlavor: OpenAiHttpFlavor = {
  name: "vllm",
  prepareAdapters: prepareVllmAdapters,
  buildCompletionBody(route, request) {
    // molmesh topK 0 means "off": llama.cpp reads 0 that way, vLLM spells it -1 (older releases reject 0).
    const body = buildSharedBody(route, request, request.topK <= 0 ? -1 : request.topK);
    if (request.constraint !== undefined)
      body["structured_outputs"] = vllmStructuredOutputs(request.constraint);
    return body;
  },
};

// ---- llama-server ------------------------------------------------------------------------------------

const loraListSchema = z.array(z.object({ id: z.number().int(), path: z.string() }));
type ServerLora = z.infer<typeof loraListSchema>[number];

const fileNameOf = (path: string): string => path.split(/[\\/]/).pop() ?? path;

async function listLoras(client: EngineHttpClient): Promise<ServerLora[]> {
  let response: Response;
  try {
    response = await client.send("/lora-adapters", { method: "GET" });
  } catch (cause) {
    throw new EngineFailureError("could not reach llama-server to list LoRA adapters", { cause });
  }
  if (!response.ok) throw new EngineFailureError(`llama-server /lora-adapters answered ${response.status}`);
  const parsed = loraListSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) {
    throw new EngineFailureError("llama-server /lora-adapters sent an unexpected body", {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/** llama-server echoes the --lora argument; accept the same file under another directory spelling if unique. */
function findLora(
  loras: readonly ServerLora[],
  adapter: OpenAiHttpAdapterOption & { path: string },
): ServerLora {
  const exact = loras.find((lora) => lora.path === adapter.path);
  if (exact !== undefined) return exact;
  const sameFile = loras.filter((lora) => fileNameOf(lora.path) === fileNameOf(adapter.path));
  const [only] = sameFile;
  if (sameFile.length === 1 && only !== undefined) return only;
  const held = loras.map((lora) => `[${lora.id}] ${lora.path}`).join(", ") || "none";
  throw new UnknownAdapterError(
    `llama-server has no LoRA for adapter "${adapter.id}" (${adapter.path}); it holds: ${held}. ` +
      `Start it with --lora ${adapter.path} (adapters cannot be added at runtime).`,
  );
}

/**
 * Maps each molmesh adapter to llama-server's LoRA ids. Every request lists all of the server's LoRAs with
 * explicit scales, so nothing depends on the global scales another client may have set via POST.
 */
async function prepareLlamaServerAdapters(
  client: EngineHttpClient,
  options: FlavorSetup,
): Promise<ServedAdapter[]> {
  const loras = await listLoras(client);
  const baseRevision = await computeFingerprint(["llama-server", options.baseModel]);
  return Promise.all(
    options.adapters.map(async (adapter): Promise<ServedAdapter> => {
      const path = adapter.path;
      const chosen = path === undefined ? undefined : findLora(loras, { ...adapter, path });
      const lora = loras.map((entry) => ({
        id: entry.id,
        scale: entry.id === chosen?.id ? (adapter.scale ?? 1) : 0,
      }));
      const route = { model: options.baseModel, lora };
      if (chosen === undefined) return { id: adapter.id, lora: false, revision: baseRevision, route };
      const revision = await computeFingerprint(["llama-server", options.baseModel, chosen.path]);
      return { id: adapter.id, lora: true, revision, route };
    }),
  );
}

/** llama-server reads a GBNF `grammar` or a `json_schema` it turns into one itself (not both). */
function llamaServerConstraint(constraint: EngineConstraint): Record<string, unknown> {
  switch (constraint.type) {
    case "choice":
      return { grammar: buildChoiceGrammar(constraint.choices) };
    case "json_schema":
      return { json_schema: toStrictJsonSchema(constraint.schema) };
    case "json_object":
      return { json_schema: { type: "object" } };
    case "tools":
      return { json_schema: toStrictJsonSchema(constraint.callSchema) };
    case "grammar":
      return { grammar: constraint.gbnf };
  }
}

export const llamaServerFlavor: OpenAiHttpFlavor = {
  name: "llama-server",
  prepareAdapters: prepareLlamaServerAdapters,
  buildCompletionBody(route, request) {
    const body = buildSharedBody(route, request, request.topK);
    body["lora"] = (route.lora ?? []).map((entry) => ({ id: entry.id, scale: entry.scale }));
    body["cache_prompt"] = true;
    if (request.constraint !== undefined) Object.assign(body, llamaServerConstraint(request.constraint));
    return body;
  },
};

export const OPENAI_HTTP_FLAVORS: Readonly<Record<OpenAiHttpFlavorName, OpenAiHttpFlavor>> = {
  vllm: vllmFlavor,
  "llama-server": llamaServerFlavor,
};
