import { getLlama, LlamaLogLevel, type Token } from "node-llama-cpp";

export interface RawDecodeRun {
  promptTokens: number;
  completionTokens: number;
  prefillTokensPerSecond: number;
  /** Tokens after the first over the time from the first sampled token to the last. */
  decodeTokensPerSecond: number;
}

/**
 * The physical limit the node is measured against: node-llama-cpp alone, one sequence of the model, the
 * node's thread settings, greedy, no server, no NATS, no slot bookkeeping. Stops after `completionTokens`
 * (what the node generated for the same prompt) or at an end-of-generation token.
 */
export async function measureRawDecode(o: {
  modelPath: string;
  threads: number;
  contextSize: number;
  prompt: string;
  completionTokens: number;
  runs: number;
}): Promise<RawDecodeRun[]> {
  const llama = await getLlama({
    gpu: false,
    build: "never",
    maxThreads: o.threads,
    logLevel: LlamaLogLevel.error,
  });
  const model = await llama.loadModel({ modelPath: o.modelPath });
  const context = await model.createContext({
    contextSize: o.contextSize,
    sequences: 1,
    threads: { ideal: o.threads, min: 1 },
  });
  try {
    const bos = model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos] : [];
    const prompt: Token[] = [...bos, ...model.tokenize(o.prompt, false, "trimLeadingSpace")];
    const runs: RawDecodeRun[] = [];
    for (let run = 0; run < o.runs; run++) {
      const sequence = context.getSequence();
      const started = performance.now();
      let firstAt = started;
      let lastAt = started;
      let generated = 0;
      for await (const token of sequence.evaluate(prompt, { temperature: 0, yieldEogToken: true })) {
        lastAt = performance.now();
        if (generated === 0) firstAt = lastAt;
        generated++;
        if (generated >= o.completionTokens || model.isEogToken(token)) break;
      }
      runs.push({
        promptTokens: prompt.length,
        completionTokens: generated,
        prefillTokensPerSecond: prompt.length / ((firstAt - started) / 1000),
        decodeTokensPerSecond: (generated - 1) / ((lastAt - firstAt) / 1000),
      });
      sequence.dispose();
    }
    return runs;
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}
