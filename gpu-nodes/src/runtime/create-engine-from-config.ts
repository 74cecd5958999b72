import type { NodeConfig } from "../config/node-config.ts";
import type { Engine } from "../engine/engine.ts";
import { createLlamaEngine } from "../engine/llama/create-llama-engine.ts";
import { fingerprintFile } from "./fingerprint-file.ts";
import { resolveModelPath } from "./resolve-model-path.ts";

/** Picks and builds the engine the configuration names; the node service only ever sees `Engine`. */
export async function createEngineFromConfig(config: NodeConfig, threads: number): Promise<Engine> {
  const { env } = config;
  const adapters = [...config.adapterPaths].map(([id, path]) => ({ id, path }));
  if (env.MOL_ENGINE === "openai-http") {
    throw new Error("openai-http engine not wired yet");
  }
  const baseModelPath = await resolveModelPath(env.MOL_BASE_MODEL as string, env.MOL_MODELS_DIR);
  return await createLlamaEngine({
    baseModelPath,
    adapters: await Promise.all(
      adapters.map(async ({ id, path }) => ({
        id,
        loraPath: path === undefined ? undefined : await resolveModelPath(path, env.MOL_MODELS_DIR),
        scale: env.MOL_ADAPTER_SCALE,
      })),
    ),
    threads,
    contextSize: env.MOL_CONTEXT_SIZE,
    slotsPerAdapter: env.MOL_SLOTS_PER_ADAPTER,
    maxWaitingPerAdapter: env.MOL_MAX_WAITING_PER_ADAPTER ?? env.MOL_SLOTS_PER_ADAPTER,
    now: () => performance.now(),
    fingerprintFile,
  });
}
