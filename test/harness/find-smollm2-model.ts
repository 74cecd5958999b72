import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  DEFAULT_BASE_MODEL,
  SMOLLM2_Q4_1_MODEL,
  findCatalogEntry,
  resolveModelsDir,
} from "../../gpu-nodes/tools/models/model-catalog.ts";

const served = findCatalogEntry(DEFAULT_BASE_MODEL);
if (served?.kind !== "requantized")
  throw new Error(`the catalogue's ${DEFAULT_BASE_MODEL} is not SmolLM2's Q8_0`);
export const SMOLLM2_FILE_NAME = served.fileName;
/** How reports name the served SmolLM2. */
export const SMOLLM2_LABEL = `SmolLM2-135M-Instruct ${served.quantization}`;

/** Where SmolLM2 is looked for, in order: an explicit file, then `molmesh models pull`'s cache. */
export function smollm2Candidates(env: NodeJS.ProcessEnv = process.env): string[] {
  return [
    ...(env.MOL_BENCH_MODEL ? [env.MOL_BENCH_MODEL] : []),
    join(resolveModelsDir(env), SMOLLM2_FILE_NAME),
  ];
}

/** The SmolLM2-135M-Instruct GGUF if one is on this machine; benches and tests skip their SmolLM2 parts without. */
export function findSmollm2Model(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return smollm2Candidates(env).find((path) => existsSync(path));
}

/** The packaged Q4_1 the served file is re-encoded from (same tokenizer), if `models pull` left it in the cache. */
export function findSmollm2SourceModel(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const source = findCatalogEntry(SMOLLM2_Q4_1_MODEL);
  const path = source && join(resolveModelsDir(env), source.fileName);
  return path !== undefined && existsSync(path) ? path : undefined;
}
