import { z } from "zod";
import { BadRequestError, EngineFailureError } from "../../../../schema/wire/v2/index.ts";
import { toStrictJsonSchema } from "../../../../schema/tools/json-schema-convert.ts";
import type { EngineConstraint } from "../engine.ts";
import { readErrorBody, type EngineErrorBody, type EngineHttpClient } from "./engine-http-client.ts";
import {
  buildSharedBody,
  sendOrFail,
  type AdapterRoute,
  type AdapterToServe,
  type FlavorConnection,
  type FlavorSetup,
  type OpenAiHttpFlavor,
} from "./flavors.ts";
import { createCacheSalter } from "./tenant-cache.ts";

const modelListSchema = z.object({
  data: z.array(z.object({ id: z.string(), root: z.string().nullish(), parent: z.string().nullish() })),
});
type ModelCard = z.infer<typeof modelListSchema>["data"][number];

const servedNameOf = (adapter: AdapterToServe): string => adapter.servedName ?? adapter.name;

/** FastAPI's bare 404: the route is off (vLLM runs without VLLM_ALLOW_RUNTIME_LORA_UPDATING=True). */
const isRouteOff = (status: number, error: EngineErrorBody): boolean =>
  status === 404 && error.type === undefined && error.message === "Not Found";

/** Fails fast on what cannot change by retrying: the node's configuration and the server's disagree. */
const misconfigured = (message: string) => new EngineFailureError(message, { retryable: false });

async function loadLora(client: EngineHttpClient, name: string, path: string): Promise<void> {
  const response = await sendOrFail(
    "vLLM",
    () =>
      client.send("/v1/load_lora_adapter", { method: "POST", body: { lora_name: name, lora_path: path } }),
    `load LoRA "${name}"`,
  );
  if (response.ok) return;
  const error = readErrorBody(await response.text());
  // Names are versioned by content, so a name loaded already (by --lora-modules or an earlier run of this
  // node) holds these very weights: "The lora adapter 'x' has already been loaded." (400).
  if (response.status === 400 && /already been loaded/i.test(error.message)) return;
  // With the route off the adapter may still come from --lora-modules, which the /v1/models check decides.
  if (isRouteOff(response.status, error)) return;
  const message = `vLLM refused to load LoRA "${name}" from ${path} (${response.status}): ${error.message}`;
  // A 4xx is about the file (missing, not a PEFT folder, another base): the same on every try.
  if (response.status < 500) throw new BadRequestError(message);
  throw new EngineFailureError(message);
}

async function unloadLora(client: EngineHttpClient, name: string): Promise<void> {
  const response = await sendOrFail(
    "vLLM",
    () => client.send("/v1/unload_lora_adapter", { method: "POST", body: { lora_name: name } }),
    `unload LoRA "${name}"`,
  );
  if (response.ok) return;
  const error = readErrorBody(await response.text());
  // Route off: the adapter came from --lora-modules and stays until vLLM restarts; nothing else to do.
  if (isRouteOff(response.status, error)) return;
  // Gone already (vLLM restarted): "The lora adapter 'x' cannot be found." (400 or 404).
  if (response.status < 500 && /cannot be found|not found|does not exist/i.test(error.message)) return;
  throw new EngineFailureError(
    `vLLM refused to unload LoRA "${name}" (${response.status}): ${error.message}`,
  );
}

async function listModels(client: EngineHttpClient): Promise<ModelCard[]> {
  const response = await sendOrFail(
    "vLLM",
    () => client.send("/v1/models", { method: "GET" }),
    "list models",
  );
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
    throw misconfigured(
      `vLLM does not serve LoRA "${name}" (${path}); it serves: ${served}. Start it with --enable-lora and ` +
        `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, or --lora-modules ${name}=${path}.`,
    );
  }
  // Same name, other weights (a stale adapter from an earlier deploy) would answer with the wrong LoRA.
  if (card.root && card.root !== path) {
    throw misconfigured(`vLLM serves LoRA "${name}" from ${card.root}, not ${path}; unload it first`);
  }
  if (card.parent && card.parent !== baseModel) {
    throw misconfigured(`vLLM serves LoRA "${name}" on base "${card.parent}", not "${baseModel}"`);
  }
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

/**
 * vLLM loads LoRAs at run time (`POST /v1/load_lora_adapter`, with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True) under
 * the revision's versioned name: its prefix cache keys on that name, so a name never stands for other weights
 * (an in-place reload would serve stale KV, vLLM #42125). `/v1/models` then confirms base and LoRAs.
 *
 * Every request carries its tenant's `cache_salt` (read by vLLM ≥ 0.10), so the shared prefix cache never serves one
 * tenant's blocks to another (tenant-cache.ts).
 */
function connectVllm(client: EngineHttpClient, setup: FlavorSetup): Promise<FlavorConnection> {
  const { baseModel } = setup;
  const saltOf = createCacheSalter(setup.cacheSaltSecret);
  return Promise.resolve({
    async prepare(adapters) {
      for (const adapter of adapters) {
        if (adapter.path !== undefined) await loadLora(client, servedNameOf(adapter), adapter.path);
      }
      const cards = await listModels(client);
      if (!cards.some((card) => card.id === baseModel)) {
        const served = cards.map((card) => card.id).join(", ");
        throw misconfigured(`vLLM does not serve base model "${baseModel}"; it serves: ${served}`);
      }
      return adapters.map((adapter): AdapterRoute => {
        if (adapter.path === undefined) return { model: baseModel };
        requireLora(cards, servedNameOf(adapter), adapter.path, baseModel);
        return { model: servedNameOf(adapter) };
      });
    },
    async release(adapter) {
      if (adapter.path !== undefined) await unloadLora(client, servedNameOf(adapter));
    },
    async buildCompletionBody(route, request) {
      // molmesh topK 0 means "off": llama.cpp reads 0 that way, vLLM spells it -1 (older releases reject 0).
      const body = buildSharedBody(route, request, request.topK <= 0 ? -1 : request.topK);
      body["cache_salt"] = await saltOf(request.tenantId);
      if (request.constraint !== undefined)
        body["structured_outputs"] = vllmStructuredOutputs(request.constraint);
      return body;
    },
  });
}

export const vllmFlavor: OpenAiHttpFlavor = { name: "vllm", connect: connectVllm };
