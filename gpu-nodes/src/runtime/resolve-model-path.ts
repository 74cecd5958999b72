import { homedir } from "node:os";
import { join } from "node:path";
import { resolveModelFile } from "node-llama-cpp";

export const DEFAULT_MODELS_DIR = join(homedir(), ".cache", "molmesh", "models");

/**
 * A local path stays as it is; an `hf:` (or https) URI is downloaded once into `modelsDir` with a progress bar
 * and reused afterwards.
 */
export async function resolveModelPath(uriOrPath: string, modelsDir = DEFAULT_MODELS_DIR): Promise<string> {
  if (!/^(hf:|https?:)/.test(uriOrPath)) return uriOrPath;
  return await resolveModelFile(uriOrPath, { directory: modelsDir, cli: true });
}
