import { getLlama, LlamaLogLevel, type Token } from "node-llama-cpp";

export interface RawDecodeRun {
  promptTokens: number;
  completionTokens: number;
  prefillTokensPerSecond: number;
  /** Tokens after the first over the time from the first sampled token to the last. */
  decodeTokensPerSecond: number;
}

export interface RawDecoder {
  /** One greedy generation on a fresh sequence: stops after `completionTokens` or at end of generation. */
  run(prompt: string, completionTokens: number): Promise<RawDecodeRun>;
  close(): Promise<void>;
}

/**
 * The physical limit the node is measured against: node-llama-cpp alone, one sequence of the model, the
 * node's thread settings, greedy, no server, no NATS, no slot bookkeeping.
 */
export async function openRawDecoder(o: {
  modelPath: string;
  threads: number;
  contextSize: number;
}): Promise<RawDecoder> {
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
  const bos = model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos] : [];
  return {
    async run(text, completionTokens) {
      const prompt: Token[] = [...bos, ...model.tokenize(text, false, "trimLeadingSpace")];
      const sequence = context.getSequence();
      try {
        const started = performance.now();
        let firstAt = started;
        let lastAt = started;
        let generated = 0;
        for await (const token of sequence.evaluate(prompt, { temperature: 0, yieldEogToken: true })) {
          lastAt = performance.now();
          if (generated === 0) firstAt = lastAt;
          generated++;
          if (generated >= completionTokens || model.isEogToken(token)) break;
        }
        return {
          promptTokens: prompt.length,
          completionTokens: generated,
          prefillTokensPerSecond: prompt.length / ((firstAt - started) / 1000),
          decodeTokensPerSecond: (generated - 1) / ((lastAt - firstAt) / 1000),
        };
      } finally {
        await sequence.dispose();
      }
    },
    async close() {
      await context.dispose();
      await model.dispose();
    },
  };
}
