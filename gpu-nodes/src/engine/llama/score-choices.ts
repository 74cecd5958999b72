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

/** Full-vocabulary softmax: no top-k or top-p cut, so a label's probability is the model's own. */
const EXACT = { temperature: 0, topK: 0, topP: 1, minP: 0 } as const;

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
        i === rest.length - 1 ? [token, { generateNext: { probabilities: true, options: EXACT } }] : token,
      ),
    );
    const firstProbabilities = evaluated[rest.length - 1]?.next.probabilities;
    if (!firstProbabilities) throw new Error("llama.cpp returned no probabilities for the view's last token");
    const prefillEnd = now();
    const logScores: number[] = [];
    for (const tokens of choiceTokens) {
      let logP = Math.log(firstProbabilities.get(tokens[0] as Token) ?? 0);
      if (tokens.length > 1 && logP > -Infinity) {
        request.signal.throwIfAborted();
        const continuation = await sequence.controlledEvaluate(
          tokens
            .slice(0, -1)
            .map((token) => [token, { generateNext: { probabilities: true, options: EXACT } }]),
        );
        tokens.slice(1).forEach((token, i) => {
          logP += Math.log(continuation[i]?.next.probabilities?.get(token) ?? 0);
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
