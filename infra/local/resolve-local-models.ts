import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureBaseAdapters } from "../../gpu-nodes/tools/models/ensure-base-adapters.ts";
import { findTrainedRouter } from "../../gpu-nodes/tools/models/find-trained-router.ts";
import {
  DEFAULT_BASE_MODEL,
  TINY_MODEL,
  findCatalogEntry,
  formatMegabytes,
  resolveModelsDir,
  weightsSha256s,
} from "../../gpu-nodes/tools/models/model-catalog.ts";
import {
  ModelPullError,
  pullModel,
  runPip,
  type PullModelDeps,
} from "../../gpu-nodes/tools/models/pull-model.ts";
import { DEFAULT_ADAPTER_IDS, ROUTER_ADAPTER } from "../../schema/wire/v2/index.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Made by llama.cpp's own converter; lives beside the checkout and is never copied into it. */
export const FIXTURE_MODEL_PATH = resolve(REPO_ROOT, "..", "shared", "fixtures", "llama-2-tiny-random.gguf");
export const LOCAL_MODELS_DIR = join(REPO_ROOT, ".cache", "models");

export interface LocalModels {
  /** Environment for the GPU node processes (MOL_BASE_MODEL, MOL_ADAPTER_*). */
  env: Record<string, string>;
  /** True when the nodes serve the generated tiny model (random weights). */
  generated: boolean;
  description: string;
  /** Set when the default real model could not be had and the tiny one stands in: why. */
  fallback?: string;
}

export interface LocalModelPaths {
  /** Where the tiny model is generated (the repo's `.cache/models`, shared with the tests). */
  modelsDir: string;
  fixturePath: string;
}

/**
 * MOL_BASE_MODEL picks the base: unset means the catalogue's SmolLM2 (pulled once into the models cache, with
 * generated LoRAs shaped for it); a catalogue name (`tiny`: the generated random llama) means that one; a path
 * or hf: URI is handed to the nodes as it is. When the default cannot be pulled, the tiny model stands in.
 */
export async function resolveLocalModels(
  env: NodeJS.ProcessEnv,
  paths: LocalModelPaths,
  deps: Partial<PullModelDeps> = {},
): Promise<LocalModels> {
  const choice = env.MOL_BASE_MODEL?.trim() || DEFAULT_BASE_MODEL;
  const entry = findCatalogEntry(choice);
  if (env.MOL_ENGINE === "openai-http" || (entry === undefined && env.MOL_BASE_MODEL)) {
    return {
      env: {},
      generated: false,
      description: env.MOL_BASE_MODEL ?? `${env.MOL_ENGINE_URL} (openai-http)`,
    };
  }
  const modelsDir = resolveModelsDir(env);
  const pullDeps: PullModelDeps = {
    fetch: deps.fetch ?? globalThis.fetch,
    runPip: deps.runPip ?? runPip,
    report: deps.report ?? (() => undefined),
    env,
    ...(deps.progress ? { progress: deps.progress } : {}),
  };
  const options = { modelsDir, generatedDir: paths.modelsDir, fixturePath: paths.fixturePath };
  const tiny = async (fallback?: string): Promise<LocalModels> => {
    const tinyEntry = findCatalogEntry(TINY_MODEL);
    if (tinyEntry === undefined) throw new Error("the catalogue lost its tiny entry");
    const pulled = await pullModel(tinyEntry, options, pullDeps);
    return {
      env: { MOL_BASE_MODEL: pulled.path, ...adapterEnv(pulled.adapters ?? {}) },
      generated: true,
      description: `${pulled.path} (generated tiny llama + ${DEFAULT_ADAPTER_IDS.length} LoRAs)`,
      ...(fallback === undefined ? {} : { fallback }),
    };
  };
  if (entry === undefined || entry.kind === "generated") return tiny();
  try {
    const pulled = await pullModel(entry, options, pullDeps);
    const adapters = await ensureBaseAdapters({
      basePath: pulled.path,
      baseSha256: entry.sha256,
      modelsDir,
      labels: DEFAULT_ADAPTER_IDS,
    });
    // The committed router adapter replaces the random l0 when it was trained on exactly these weights.
    const router = findTrainedRouter(weightsSha256s(entry));
    if (router) adapters[ROUTER_ADAPTER] = router.path;
    return {
      env: { MOL_BASE_MODEL: pulled.path, ...adapterEnv(adapters) },
      generated: false,
      description:
        `${entry.name} (${pulled.path}, ${formatMegabytes(entry.bytes)}, ${entry.license}) + ` +
        (router
          ? `trained ${ROUTER_ADAPTER} (dev accuracy ${((router.manifest.devAccuracy ?? 0) * 100).toFixed(1)} %) + ` +
            `${DEFAULT_ADAPTER_IDS.length - 1} generated LoRAs`
          : `${DEFAULT_ADAPTER_IDS.length} generated LoRAs`),
    };
  } catch (error) {
    // Only the default falls back: a model the user named is one they meant.
    if (!(error instanceof ModelPullError) || env.MOL_BASE_MODEL?.trim()) throw error;
    return tiny(error.summary());
  }
}

function adapterEnv(adapters: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    DEFAULT_ADAPTER_IDS.flatMap((id) => {
      const path = adapters[id];
      return path ? [[adapterEnvName(id), path]] : [];
    }),
  );
}

/**
 * The variable a GPU node reads an adapter's LoRA path from: `chat` → `MOL_ADAPTER_CHAT`, `my-lora` →
 * `MOL_ADAPTER_MY_LORA`. The node's own reading is gpu-nodes/src/config/node-config.ts (infra runs the node as a
 * command and imports none of it); test/gpu-node-unit/node-config.test.ts holds the two equal.
 */
export function adapterEnvName(adapterId: string): string {
  return `MOL_ADAPTER_${adapterId.toUpperCase().replace(/-/g, "_")}`;
}
