import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { ContextLengthExceededError } from "../../../../schema/wire/v1/index.ts";
import type { EngineGenerateRequest, EngineGenerateResult } from "../engine.ts";
import type { SlotTokens } from "./slot-tokens.ts";
import { toEngineError } from "./generate-on-sequence.ts";
import { tokenizePrompt } from "./tokenize-prompt.ts";

export interface ChoiceScoring {
  sequence: LlamaContextSequence;
  /** What the slot's tokens stand for; scoring plans the view as a generation would and leaves the view held. */
  slotTokens: SlotTokens;
  choices: readonly string[];
  request: EngineGenerateRequest;
  now: () => number;
}

/**
 * The model's own softmax (temperature 1, no top-p or min-p), returned for its 1,024 most probable tokens only:
 * node-llama-cpp hands probabilities to JS as one array over what the sampler keeps, and the full 49k-token
 * vocabulary cost a route hop ~10 ms (on two cores) to build. Ratios between kept tokens are exact. When a
 * label's first token is not kept, the view's last token is evaluated again over the whole vocabulary (a
 * trained router puts its labels far above the 1,024th token; the bare-base baselines of `eval:route` do
 * not). A continuation token not kept is given the smallest kept probability, an upper bound.
 */
export const LABEL_SCORING_OPTIONS = { temperature: 1, topK: 1024, topP: 1, minP: 0 } as const;
const WHOLE_VOCABULARY = { temperature: 1, topK: 0, topP: 1, minP: 0 } as const;
/**
 * A multi-token label whose first token holds under this share of the single-token labels' probability is not
 * continued: it cannot win (one of those labels is more probable than its first token alone), and its first
 * token's probability stands in for its own as an upper bound, which lowers the winner's confidence by less
 * than this share. That spares most route hops a forward pass (SmolLM2 splits "genui" into "gen" "ui").
 * Riding the continuation in the view's batch instead is no cheaper: node-llama-cpp evaluates a batch that
 * wants two tokens' distributions as two decodes (measured: every route hop 26 ms slower).
 */
export const SKIP_CONTINUATION_SHARE = 0.005;

/**
 * A choice constraint decoded by scoring: P(choice) = Π p(token_i | view, earlier tokens) over each choice's
 * tokens, normalised over the choices, and the most probable one is the answer. With labels that share no
 * first token this is the distribution a choice grammar samples from, computed exactly instead of one path of
 * it, for the cost of the view plus the few extra tokens of multi-token labels. The KV slot is left holding
 * the view, so the next view of the conversation reuses it as a grammar decode would.
 */
export async function scoreChoicesOnSequence({
  sequence,
  slotTokens,
  choices,
  request,
  now,
}: ChoiceScoring): Promise<Omit<EngineGenerateResult, "queueMs">> {
  const model = sequence.model;
  const bos = model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
  const plan = slotTokens.plan({
    conversationId: request.conversationId,
    prompt: request.prompt,
    start: bos == null ? [] : [bos],
    held: sequence.contextTokens,
    tokenize: (text) => tokenizePrompt(model, text),
  });
  const fullPrompt = plan.tokens;
  const choiceTokens = choices.map((choice) => model.tokenize(choice, false));
  const longest = Math.max(...choiceTokens.map((t) => t.length));
  if (fullPrompt.length + longest > sequence.context.contextSize) {
    throw new ContextLengthExceededError(
      `view is ${fullPrompt.length} tokens; the context of adapter "${request.adapter}" holds ${sequence.context.contextSize}`,
    );
  }
  const started = now();
  const cached = Math.min(
    sequence.compareContextTokens(fullPrompt).firstDifferentIndex,
    fullPrompt.length - 1,
  );
  try {
    request.signal.throwIfAborted();
    await eraseFrom(sequence, cached);
    const rest = fullPrompt.slice(cached);
    const evaluated = await sequence.controlledEvaluate(
      rest.map((token, i) =>
        i === rest.length - 1
          ? [token, { generateNext: { probabilities: true, options: LABEL_SCORING_OPTIONS } }]
          : token,
      ),
    );
    let firstProbabilities = evaluated[rest.length - 1]?.next.probabilities;
    if (!firstProbabilities) throw new Error("llama.cpp returned no probabilities for the view's last token");
    if (choiceTokens.some((tokens) => !firstProbabilities?.has(tokens[0] as Token))) {
      // A label outside the kept tokens (a bare base that barely considers any label): the view's last token
      // again, over the whole vocabulary, so every label's probability is the model's own.
      await eraseFrom(sequence, fullPrompt.length - 1);
      const [again] = await sequence.controlledEvaluate([
        [fullPrompt.at(-1) as Token, { generateNext: { probabilities: true, options: WHOLE_VOCABULARY } }],
      ]);
      firstProbabilities = again?.next.probabilities ?? firstProbabilities;
    }
    const prefillEnd = now();
    const first = choiceTokens.map((tokens) => probabilityOf(firstProbabilities, tokens[0] as Token));
    // Single-token labels are scored exactly by the first distribution alone.
    const wholeMass = first.reduce((sum, p, i) => (choiceTokens[i]?.length === 1 ? sum + p : sum), 0);
    const logScores: number[] = [];
    for (const [c, tokens] of choiceTokens.entries()) {
      const p0 = first[c] as number;
      let logP = Math.log(p0);
      const bounded = p0 < SKIP_CONTINUATION_SHARE * wholeMass;
      if (tokens.length > 1 && p0 > 0 && !bounded) {
        request.signal.throwIfAborted();
        const continuation = await sequence.controlledEvaluate(
          tokens
            .slice(0, -1)
            .map((token) => [
              token,
              { generateNext: { probabilities: true, options: LABEL_SCORING_OPTIONS } },
            ]),
        );
        tokens.slice(1).forEach((token, i) => {
          const next = continuation[i]?.next.probabilities;
          logP += Math.log(next ? probabilityOf(next, token) : 0);
        });
        await eraseFrom(sequence, fullPrompt.length);
      }
      logScores.push(logP);
    }
    // The sequence holds the view again (continuations erased), and no label: the route line comes as text.
    slotTokens.retain(plan, [], sequence.contextTokens);
    const probabilities = normalise(logScores);
    const best = probabilities.indexOf(Math.max(...probabilities));
    const ended = now();
    return {
      text: choices[best] as string,
      finishReason: "stop",
      choiceProbabilities: Object.fromEntries(choices.map((c, i) => [c, probabilities[i] as number])),
      usage: {
        promptTokens: fullPrompt.length,
        cachedPromptTokens: cached,
        evaluatedPromptTokens: fullPrompt.length - cached,
        // The label's own tokens: what a decode would have produced and the route line will hold.
        completionTokens: (choiceTokens[best] as Token[]).length,
      },
      prefillMs: prefillEnd - started,
      decodeMs: ended - prefillEnd,
    };
  } catch (error) {
    slotTokens.forget();
    throw toEngineError(error, request.signal, "choice scoring");
  }
}

/** A kept token's probability, else the smallest kept one: no token outside the kept set is more probable. */
function probabilityOf(kept: ReadonlyMap<Token, number>, token: Token): number {
  const p = kept.get(token);
  if (p !== undefined) return p;
  let smallest = Infinity;
  for (const value of kept.values()) smallest = Math.min(smallest, value);
  return smallest === Infinity ? 0 : smallest;
}

async function eraseFrom(sequence: LlamaContextSequence, start: number): Promise<void> {
  if (sequence.nextTokenIndex > start) {
    await sequence.eraseContextTokenRanges([{ start, end: sequence.nextTokenIndex }]);
  }
}

/** Softmax of log scores; all −∞ (no choice reachable) spreads evenly rather than dividing by zero. */
export function normalise(logScores: readonly number[]): number[] {
  const max = Math.max(...logScores);
  if (max === -Infinity) return logScores.map(() => 1 / logScores.length);
  const exps = logScores.map((s) => Math.exp(s - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}
