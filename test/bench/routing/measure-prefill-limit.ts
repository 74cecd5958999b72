import { getLlama, LlamaLogLevel, type LlamaContext, type LlamaModel, type Token } from "node-llama-cpp";
import { LABEL_SCORING_OPTIONS } from "../../../gpu-nodes/src/engine/llama/score-choices.ts";
import { tokenizeView } from "../../../gpu-nodes/src/engine/llama/tokenize-prompt.ts";
import { percentile } from "../stats.ts";

/** What one route hop's prefill costs node-llama-cpp alone: the same work, no NATS, no node, no slot bookkeeping. */
export interface PrefillLimit {
  threads: number;
  /** Tokens already in the KV before the prefill (the slot's reused prefix). */
  heldTokens: number;
  /** Tokens evaluated, the last with its next-token probabilities (as the route hop scores labels). */
  tokens: number;
  /** Median over the repetitions. */
  ms: number;
}

export interface RawPrefiller {
  measure(o: {
    threads: number;
    heldTokens: number;
    tokens: number;
    repetitions?: number;
  }): Promise<PrefillLimit>;
  close(): Promise<void>;
}

/**
 * The route hop's physical limit on this machine: the base model loaded once more, one context per thread count,
 * and a prefill of as many tokens as the hop evaluated, after as many held ones as it reused. The tokens are a
 * real route view's (`sampleText`), so special tokens and text weigh as in the eval.
 */
export async function openRawPrefiller(o: {
  modelPath: string;
  threadCounts: readonly number[];
  sampleText: string;
}): Promise<RawPrefiller> {
  const llama = await getLlama({
    gpu: false,
    build: "never",
    maxThreads: Math.max(...o.threadCounts),
    logLevel: LlamaLogLevel.error,
  });
  const model: LlamaModel = await llama.loadModel({ modelPath: o.modelPath });
  const contexts = new Map<number, LlamaContext>();
  for (const threads of o.threadCounts) {
    contexts.set(
      threads,
      await model.createContext({
        contextSize: 2048,
        sequences: 1,
        threads: { ideal: threads, min: threads },
      }),
    );
  }
  const sample = tokenizeView(model, o.sampleText);
  return {
    async measure({ threads, heldTokens, tokens, repetitions = 9 }) {
      const context = contexts.get(threads);
      if (!context) throw new RangeError(`the raw prefiller has no ${threads}-thread context`);
      const wanted = heldTokens + Math.max(1, tokens);
      const source: Token[] = [];
      while (source.length < wanted) source.push(...sample);
      const held = source.slice(0, heldTokens);
      const rest = source.slice(heldTokens, wanted);
      const sequence = context.getSequence();
      try {
        if (held.length > 0) await sequence.evaluateWithoutGeneratingNewTokens(held);
        const times: number[] = [];
        // One warm-up, then the measured repetitions; each erases what the last one evaluated.
        for (let i = 0; i <= repetitions; i++) {
          const started = performance.now();
          await sequence.controlledEvaluate(
            rest.map((token, j) =>
              j === rest.length - 1
                ? [token, { generateNext: { probabilities: true, options: LABEL_SCORING_OPTIONS } }]
                : token,
            ),
          );
          if (i > 0) times.push(performance.now() - started);
          await sequence.eraseContextTokenRanges([{ start: heldTokens, end: sequence.nextTokenIndex }]);
        }
        return { threads, heldTokens, tokens: rest.length, ms: percentile(times, 50) };
      } finally {
        await sequence.dispose();
      }
    },
    async close() {
      await Promise.allSettled([...contexts.values()].map((c) => c.dispose()));
      await model.dispose();
      await llama.dispose();
    },
  };
}
