import { existsSync } from "node:fs";
import { join } from "node:path";
import { ensureBaseAdapters } from "../../gpu-nodes/tools/models/ensure-base-adapters.ts";
import {
  DEFAULT_BASE_MODEL,
  findCatalogEntry,
  resolveModelsDir,
} from "../../gpu-nodes/tools/models/model-catalog.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";
import { TEST_MODELS_DIR } from "./paths.ts";

/**
 * The real-model tier's model: the catalogue's default base (SmolLM2-135M-Instruct, ChatML, a 49k byte-level BPE),
 * small enough for CPU tests. Found where `molmesh models pull` puts it (MOL_MODELS_DIR, else
 * $XDG_CACHE_HOME/molmesh/models, else ~/.cache/molmesh/models).
 */
const entry = findCatalogEntry(DEFAULT_BASE_MODEL);
if (entry === undefined || entry.kind === "generated") {
  throw new Error(`the catalogue's ${DEFAULT_BASE_MODEL} is not a real model`);
}
export const REAL_MODEL = entry;

const candidates = [join(resolveModelsDir(process.env), REAL_MODEL.fileName)];
export const REAL_MODEL_PATH: string | undefined = candidates.find((path) => existsSync(path));

/**
 * True when a real-model test file must skip its cases: the model is absent, which is said in one line. Under
 * CI=true an absent model fails the file instead, so CI cannot pass by skipping the tier.
 */
export function skipWithoutRealModel(testName: string): boolean {
  if (REAL_MODEL_PATH) return false;
  const why =
    `${testName}: ${REAL_MODEL.fileName} is not in ${candidates.join(" or ")}; ` +
    `run \`npm run molmesh -- models pull ${REAL_MODEL.name}\``;
  if (process.env["CI"] === "true") throw new Error(`${why} (CI=true: the real-model tier may not skip)`);
  console.warn(`${why} — its real-model cases are skipped`);
  return true;
}

/** Every specialist as `npm start` serves it on this base: a generated LoRA per label (in the tests' cache). */
export async function realModelAdapters(): Promise<Array<{ id: string; loraPath: string }>> {
  const paths = await ensureBaseAdapters({
    basePath: REAL_MODEL_PATH ?? "",
    baseSha256: REAL_MODEL.sha256,
    modelsDir: TEST_MODELS_DIR,
    labels: DEFAULT_ADAPTER_IDS,
  });
  return Object.entries(paths).map(([id, loraPath]) => ({ id, loraPath }));
}
