import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { adapterEnvName } from "../../gpu-nodes/src/config/node-config.ts";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v1/index.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Made by llama.cpp's own converter; lives beside the checkout and is never copied into it. */
export const FIXTURE_MODEL_PATH = resolve(REPO_ROOT, "..", "shared", "fixtures", "llama-2-tiny-random.gguf");
export const LOCAL_MODELS_DIR = join(REPO_ROOT, ".cache", "models");

export interface LocalModels {
  /** Environment for the GPU node processes (MOL_BASE_MODEL, MOL_ADAPTER_*). */
  env: Record<string, string>;
  /** True when we fell back to the generated tiny model. */
  generated: boolean;
  description: string;
}

/**
 * The user's model when MOL_BASE_MODEL (or an openai-http engine) is configured; otherwise the project's
 * generated tiny llama, which needs no network and whose answers are noise.
 */
export async function resolveLocalModels(
  env: NodeJS.ProcessEnv,
  paths: { modelsDir: string; fixturePath: string },
): Promise<LocalModels> {
  if (env.MOL_BASE_MODEL || env.MOL_ENGINE === "openai-http") {
    return {
      env: {},
      generated: false,
      description: env.MOL_BASE_MODEL ?? `${env.MOL_ENGINE_URL} (openai-http)`,
    };
  }
  const models = await ensureTestModels({ outDir: paths.modelsDir, fixturePath: paths.fixturePath });
  const adapters = Object.fromEntries(
    DEFAULT_ADAPTER_IDS.flatMap((id) => {
      const path = models.adapters[id];
      return path ? [[adapterEnvName(id), path]] : [];
    }),
  );
  return {
    env: { MOL_BASE_MODEL: models.base, ...adapters },
    generated: true,
    description: `${models.base} (generated tiny llama + 5 LoRAs)`,
  };
}
