import {
  getLlama,
  LlamaLogLevel,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";

export interface RawDecodeRun {
  promptTokens: number;
  completionTokens: number;
  prefillTokensPerSecond: number;
  /** Tokens after the first over the time from the first sampled token to the last. */
  decodeTokensPerSecond: number;
}

export interface RawBatchedDecodeRun {
  sequences: number;
  /** Tokens each sequence held before decoding (its prompt). */
  promptTokens: number;
  /** Every sequence's prompt but its last token, evaluated at once, over the time that took. */
  prefillTokensPerSecond: number;
  /** Tokens sampled, all sequences together. */
  completionTokens: number;
  wallSeconds: number;
  /** All sequences' tokens over the time from the start of decoding to the last token of any sequence. */
  decodeTokensPerSecond: number;
}

export interface RawDecoder {
  /** One greedy generation on a fresh sequence: stops after `completionTokens` or at end of generation. */
  run(prompt: string, completionTokens: number): Promise<RawDecodeRun>;
  /**
   * Every sequence of the context decoding at once: each holds the same prompt (evaluated first, timed apart as
   * prefill), then all generate `completionTokens` greedily together, so node-llama-cpp puts one token of each into
   * every batch. `contextTokens` cuts the prompt to its first that many tokens, so a sequence decodes while
   * holding as much context as a node's hop does (decode slows as the attended context grows).
   */
  runBatched(
    prompt: string,
    completionTokens: number,
    o?: { contextTokens?: number },
  ): Promise<RawBatchedDecodeRun>;
  close(): Promise<void>;
}

/**
 * The physical limit the node is measured against: node-llama-cpp alone on the model, the node's thread
 * settings, greedy, no server, no NATS, no slot bookkeeping. `sequences` > 1 gives the batched limit: as many
 * sequences of one context as the node lets decode at once.
 */
export async function openRawDecoder(o: {
  modelPath: string;
  threads: number;
  contextSize: number;
  sequences?: number;
}): Promise<RawDecoder> {
  const llama = await getLlama({
    gpu: false,
    build: "never",
    maxThreads: o.threads,
    logLevel: LlamaLogLevel.error,
  });
  const model = await llama.loadModel({ modelPath: o.modelPath });
  const sequences = o.sequences ?? 1;
  const context = await model.createContext({
    contextSize: o.contextSize,
    sequences,
    threads: { ideal: o.threads, min: 1 },
  });
  const bos = model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos] : [];
  const tokenize = (text: string): Token[] => [...bos, ...model.tokenize(text, false, "trimLeadingSpace")];
  return {
    async run(text, completionTokens) {
      const prompt = tokenize(text);
      const sequence = context.getSequence();
      try {
        const started = performance.now();
        const timed = await decodeGreedy(sequence, model, prompt, completionTokens, started);
        return {
          promptTokens: prompt.length,
          completionTokens: timed.generated,
          prefillTokensPerSecond: prompt.length / ((timed.firstAt - started) / 1000),
          decodeTokensPerSecond: (timed.generated - 1) / ((timed.lastAt - timed.firstAt) / 1000),
        };
      } finally {
        await sequence.dispose();
      }
    },
    async runBatched(text, completionTokens, o = {}) {
      const whole = tokenize(text);
      if (o.contextTokens !== undefined && o.contextTokens > whole.length)
        throw new Error(`raw prompt has ${whole.length} tokens, fewer than the ${o.contextTokens} asked for`);
      const prompt = whole.slice(0, Math.max(1, o.contextTokens ?? whole.length));
      const all = Array.from({ length: sequences }, () => context.getSequence());
      try {
        // The prompt minus its last token goes in first, so the decode timing is decoding, one token per sequence.
        const prefillStarted = performance.now();
        await Promise.all(all.map((s) => s.evaluateWithoutGeneratingNewTokens(prompt.slice(0, -1))));
        const started = performance.now();
        const prefillSeconds = (started - prefillStarted) / 1000;
        const runs = await Promise.all(
          all.map((s) => decodeGreedy(s, model, prompt.slice(-1), completionTokens, started)),
        );
        const generated = runs.reduce((sum, r) => sum + r.generated, 0);
        const wallSeconds = (Math.max(...runs.map((r) => r.lastAt)) - started) / 1000;
        return {
          sequences,
          promptTokens: prompt.length,
          prefillTokensPerSecond: (sequences * (prompt.length - 1)) / prefillSeconds,
          completionTokens: generated,
          wallSeconds,
          decodeTokensPerSecond: generated / wallSeconds,
        };
      } finally {
        await Promise.all(all.map((s) => s.dispose()));
      }
    },
    async close() {
      await context.dispose();
      await model.dispose();
    },
  };
}

async function decodeGreedy(
  sequence: LlamaContextSequence,
  model: LlamaModel,
  tokens: Token[],
  completionTokens: number,
  started: number,
): Promise<{ generated: number; firstAt: number; lastAt: number }> {
  let firstAt = started;
  let lastAt = started;
  let generated = 0;
  for await (const token of sequence.evaluate(tokens, { temperature: 0, yieldEogToken: true })) {
    lastAt = performance.now();
    if (generated === 0) firstAt = lastAt;
    generated++;
    if (generated >= completionTokens || model.isEogToken(token)) break;
  }
  return { generated, firstAt, lastAt };
}
