import { LlamaCompletion } from "node-llama-cpp";
import type { LlamaModel } from "node-llama-cpp";

export const GREEDY_MAX_TOKENS = 16;
/** Explicit threads: node-llama-cpp's default is very slow on the 2-core CI box. */
export const TEST_THREADS = 1;
export const TEST_CONTEXT_TOKENS = 512;

/** Greedy completion of `prompt` on a fresh context, with the LoRA at `loraPath` applied when given. */
export async function generateGreedy(model: LlamaModel, prompt: string, loraPath?: string): Promise<string> {
  const context = await model.createContext({
    contextSize: TEST_CONTEXT_TOKENS,
    sequences: 1,
    threads: TEST_THREADS,
    ...(loraPath === undefined ? {} : { lora: { adapters: [{ filePath: loraPath, scale: 1 }] } }),
  });
  try {
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    return await completion.generateCompletion(prompt, { maxTokens: GREEDY_MAX_TOKENS, temperature: 0 });
  } finally {
    await context.dispose();
  }
}
