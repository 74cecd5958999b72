import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Made by llama.cpp's own converter; lives beside the checkout and is never copied into it. */
export const FIXTURE_MODEL_PATH = resolve(REPO_ROOT, "..", "shared", "fixtures", "llama-2-tiny-random.gguf");
export const LOCAL_MODELS_DIR = join(REPO_ROOT, ".cache", "models");
