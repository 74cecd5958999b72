import { resolve } from "node:path";
import type { LlamaModel } from "node-llama-cpp";

/** node-llama-cpp 3.21.1's native LoRA handle: `dispose()` runs `llama_adapter_lora_free`. */
interface NativeLora {
  dispose(): Promise<void>;
}

/**
 * Frees a LoRA's weights once no context uses it. node-llama-cpp 3.21.1 loads each LoRA file once per model and
 * keeps it in the model's private `_loraAdapters` map (resolved path → native adapter) until the model is
 * disposed: disposing the contexts that used it returns their KV, never the LoRA (each 48 MB LoRA stayed in RSS
 * in test/gpu-node/adapter-revisions.test.ts). There is no public call to free one, so this takes the adapter out of that map (a later load of the file reads it afresh) and disposes it,
 * which calls `llama_adapter_lora_free`; that also takes it out of the llama.cpp model's own set of LoRAs.
 *
 * Call only once every context created with the file is disposed: a live context would keep a freed pointer.
 * Returns false (and frees nothing) when node-llama-cpp's internals are not what this expects, e.g. after an
 * upgrade; the LoRA then stays until the engine closes.
 */
export async function releaseLora(model: LlamaModel, filePath: string): Promise<boolean> {
  const cache: unknown = Reflect.get(model, "_loraAdapters");
  if (!(cache instanceof Map)) return false;
  const key = resolve(process.cwd(), filePath);
  const lora: unknown = cache.get(key);
  if (typeof lora !== "object" || lora === null || typeof Reflect.get(lora, "dispose") !== "function") {
    return false;
  }
  cache.delete(key);
  await (lora as NativeLora).dispose();
  return true;
}
