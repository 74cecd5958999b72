import type { Llama, Token } from "node-llama-cpp";

/** The model's own softmax over the whole vocabulary at every position. */
const WHOLE_VOCABULARY = { temperature: 0, topK: 0, topP: 1, minP: 0 } as const;

export interface DistributionComparison {
  positions: number;
  /** Mean KL(reference ‖ candidate) over the positions, in nats. */
  meanKlNats: number;
  /** Share of positions where both put the same token on top. */
  top1Agreement: number;
  /** Perplexity of the text's own next tokens under each model. */
  perplexityReference: number;
  perplexityCandidate: number;
}

async function nextTokenDistributions(llama: Llama, path: string, text: string) {
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize: 512, threads: 2 });
  try {
    const tokens = model.tokenize(text, true);
    const out = await context
      .getSequence()
      .controlledEvaluate(
        tokens.map((t) => [t, { generateNext: { probabilities: true, options: WHOLE_VOCABULARY } }]),
      );
    return { tokens, distributions: out.map((o) => o?.next.probabilities ?? new Map<Token, number>()) };
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

/**
 * How far a re-encoded model's next-token distributions are from the reference's on `text` (same tokenizer):
 * what the Q8_0 re-encoding test bounds and `npm run bench:base-format` reports.
 */
export async function compareNextTokenDistributions(
  llama: Llama,
  referencePath: string,
  candidatePath: string,
  text: string,
): Promise<DistributionComparison> {
  const reference = await nextTokenDistributions(llama, referencePath, text);
  const candidate = await nextTokenDistributions(llama, candidatePath, text);
  const top = (p: Map<Token, number>) => [...p.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const probability = (p: Map<Token, number>, token: Token) => Math.max(p.get(token) ?? 0, 1e-12);
  let kl = 0;
  let sameTop = 0;
  let nllReference = 0;
  let nllCandidate = 0;
  // The last position predicts past the text, so it has no next token to score.
  const positions = reference.distributions.length - 1;
  for (let i = 0; i < positions; i++) {
    const p = reference.distributions[i] as Map<Token, number>;
    const q = candidate.distributions[i] as Map<Token, number>;
    for (const [token, pv] of p) if (pv > 1e-9) kl += pv * Math.log(pv / probability(q, token));
    if (top(p) === top(q)) sameTop++;
    const actual = reference.tokens[i + 1] as Token;
    nllReference -= Math.log(probability(p, actual));
    nllCandidate -= Math.log(probability(q, actual));
  }
  return {
    positions,
    meanKlNats: kl / positions,
    top1Agreement: sameTop / positions,
    perplexityReference: Math.exp(nllReference / positions),
    perplexityCandidate: Math.exp(nllCandidate / positions),
  };
}
