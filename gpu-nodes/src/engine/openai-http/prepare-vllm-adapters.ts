import { z } from "zod";
import { EngineFailureError, UnknownAdapterError } from "../../../../schema/wire/v1/index.ts";
import { computeFingerprint } from "./compute-fingerprint.ts";
import type { EngineHttpClient } from "./engine-http-client.ts";
import type { OpenAiHttpEngineOptions } from "./openai-http-engine-options.ts";
import { readErrorBody } from "./read-error-body.ts";
import type { ServedAdapter } from "./served-adapter.ts";

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
export async function prepareVllmAdapters(
  client: EngineHttpClient,
  options: Pick<OpenAiHttpEngineOptions, "adapters" | "baseModel">,
): Promise<ServedAdapter[]> {
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
