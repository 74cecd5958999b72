import { homedir } from "node:os";
import { join } from "node:path";
import { resolveModelFile } from "node-llama-cpp";
import type { NodeConfig } from "../config/node-config.ts";
import type { Engine } from "../engine/engine.ts";
import { createLlamaEngine } from "../engine/llama/create-llama-engine.ts";
import { createOpenAiHttpEngine } from "../engine/openai-http/openai-http-engine.ts";
import { fingerprintAdapterPath, fingerprintFile } from "./fingerprint-file.ts";

export const DEFAULT_MODELS_DIR = join(homedir(), ".cache", "molmesh", "models");

/**
 * A local path stays as it is; an `hf:` (or https) URI is downloaded once into `modelsDir` with a progress bar
 * and reused afterwards.
 */
export async function resolveModelPath(uriOrPath: string, modelsDir = DEFAULT_MODELS_DIR): Promise<string> {
  if (!/^(hf:|https?:)/.test(uriOrPath)) return uriOrPath;
  return await resolveModelFile(uriOrPath, { directory: modelsDir, cli: true });
}

/**
 * Picks and builds the engine the configuration names; the node service only ever sees `Engine`. `warn` hears of
 * a setup that serves but degraded (a llama-server whose slot count cannot be read).
 */
export async function createEngineFromConfig(
  config: NodeConfig,
  threads: number,
  routeThreads: number = threads,
  warn: (message: string) => void = () => undefined,
): Promise<Engine> {
  const { env } = config;
  const adapters = [...config.adapterPaths].map(([id, path]) => ({ id, path }));
  if (env.MOL_ENGINE === "openai-http") {
    // Adapter paths are as the engine server sees them: it loads them (vLLM) or already has them (llama-server).
    return await createOpenAiHttpEngine({
      flavor: env.MOL_ENGINE_FLAVOR,
      baseUrl: env.MOL_ENGINE_URL as string,
      apiKey: env.MOL_ENGINE_API_KEY,
      baseModel: env.MOL_ENGINE_MODEL as string,
      adapters: adapters.map(({ id, path }) => ({ id, path, scale: env.MOL_ADAPTER_SCALE })),
      fingerprintPath: fingerprintAdapterPath,
      fetch: globalThis.fetch.bind(globalThis),
      now: () => performance.now(),
      warmSlotsPerAdapter: env.MOL_SLOTS_PER_ADAPTER,
      cacheSaltSecret: env.MOL_CACHE_SALT_SECRET,
      warn,
    });
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
    routeThreads,
    contextSize: env.MOL_CONTEXT_SIZE,
    slotsPerAdapter: env.MOL_SLOTS_PER_ADAPTER,
    summarySlotsPerAdapter: env.MOL_SUMMARY_SLOTS_PER_ADAPTER,
    primeRouterSlots: true,
    hopPriority: { enabled: env.MOL_SUMMARY_YIELD, maxDeferralMs: env.MOL_SUMMARY_MAX_DEFERRAL_MS },
    // The node's admission runs at most MOL_MAX_CONCURRENT hops (the rest wait fairly there), so a slot wait
    // this long never refuses a hop the node has admitted.
    maxWaitingPerAdapter: env.MOL_MAX_WAITING_PER_ADAPTER ?? env.MOL_MAX_CONCURRENT,
    now: () => performance.now(),
    fingerprintFile,
  });
}
