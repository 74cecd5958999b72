import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { ContextLengthExceededError } from "../../../../schema/wire/v2/index.ts";
import type { EngineGenerateRequest, EngineGenerateResult } from "../engine.ts";
import type { SlotTokens } from "./slot-tokens.ts";
import { toEngineError } from "./generate-on-sequence.ts";
import { cutAtStableBoundary, tokenizePrompt } from "./tokenize-prompt.ts";

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
 * not). The same holds where the labels branch below the first token.
 */
export const LABEL_SCORING_OPTIONS = { temperature: 1, topK: 1024, topP: 1, minP: 0 } as const;
const WHOLE_VOCABULARY = { temperature: 1, topK: 0, topP: 1, minP: 0 } as const;

/** The choices' tokens as a prefix tree: each step of a choice grammar is one node's set of legal tokens. */
interface ChoiceNode {
  children: Map<Token, ChoiceNode>;
  /** Indices of the choices that end here. */
  ends: number[];
}

function buildChoiceTree(choiceTokens: readonly Token[][]): ChoiceNode {
  const root: ChoiceNode = { children: new Map(), ends: [] };
  for (const [c, tokens] of choiceTokens.entries()) {
    let node = root;
    for (const token of tokens) {
      let child = node.children.get(token);
      if (!child) node.children.set(token, (child = { children: new Map(), ends: [] }));
      node = child;
    }
    node.ends.push(c);
  }
  return root;
}

/** Legal steps at a node: its children, plus ending (the end-of-generation tokens) where a choice ends. */
function countOptions(node: ChoiceNode): number {
  return node.children.size + (node.ends.length > 0 ? 1 : 0);
}

export interface ScoredChoice {
  result: Omit<EngineGenerateResult, "queueMs">;
  /**
   * Evaluates the chosen choice's tokens and then `afterChoice` into the slot, as the next view of the
   * conversation will hold them, so its next prompt prefills only what is new. For a route: the label, the
   * route line's end and the next user line's opening (`render-view-lines.ts`), known once the label is.
   */
  extendView(afterChoice: string): Promise<void>;
}

/**
 * A choice constraint decoded by scoring, with the probabilities of a choice grammar: at each step the legal
 * tokens (the prefix tree's children at that point) are renormalised among themselves, and P(choice) is the
 * product along its path. That is the distribution llama.cpp's grammar sampler draws from at temperature 1,
 * computed exactly instead of one path of it. A step with one legal token is certain under the grammar and
 * costs no forward pass: "genui" is "gen" "ui" in SmolLM2's vocabulary, but no other label starts with "gen",
 * so every route hop is the view's prefill alone (a continuation pass cost a genui hop ~16 ms, a quarter of
 * all hops). Only labels sharing a first token ("agent", "agents") need the model once more, at the branch.
 * The KV slot is left holding the view, so the next view of the conversation reuses it as a grammar decode
 * would.
 */
export async function scoreChoicesOnSequence({
  sequence,
  slotTokens,
  choices,
  request,
  now,
}: ChoiceScoring): Promise<ScoredChoice> {
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
    const tree = buildChoiceTree(choiceTokens);
    if (missesLegalStep(tree, firstProbabilities, model)) {
      // A label outside the kept tokens (a bare base that barely considers any label): the view's last token
      // again, over the whole vocabulary, so every label's probability is the model's own.
      await eraseFrom(sequence, fullPrompt.length - 1);
      const [again] = await sequence.controlledEvaluate([
        [fullPrompt.at(-1) as Token, { generateNext: { probabilities: true, options: WHOLE_VOCABULARY } }],
      ]);
      firstProbabilities = again?.next.probabilities ?? firstProbabilities;
    }
    const prefillEnd = now();
    const probabilities = choices.map(() => 0);
    /**
     * The distribution after the view and `path`, where the grammar branches below the root. Exact, as at the
     * root: a legal token outside the kept ones (or no end token kept where a label may end) means the whole
     * vocabulary once more.
     */
    const evaluateBranch = async (node: ChoiceNode, path: readonly Token[]) => {
      request.signal.throwIfAborted();
      const wanted = (options: typeof LABEL_SCORING_OPTIONS | typeof WHOLE_VOCABULARY) =>
        path.map((token, i) =>
          i === path.length - 1 ? [token, { generateNext: { probabilities: true, options } }] : token,
        ) as Parameters<typeof sequence.controlledEvaluate>[0];
      let out = await sequence.controlledEvaluate(wanted(LABEL_SCORING_OPTIONS));
      let kept = out[path.length - 1]?.next.probabilities ?? new Map<Token, number>();
      await eraseFrom(sequence, fullPrompt.length);
      if (missesLegalStep(node, kept, model)) {
        out = await sequence.controlledEvaluate(wanted(WHOLE_VOCABULARY));
        kept = out[path.length - 1]?.next.probabilities ?? kept;
        await eraseFrom(sequence, fullPrompt.length);
      }
      return kept;
    };
    // Depth-first over the tree; a branch below the root evaluates its path once, then the slot is the view again.
    const visit = async (
      node: ChoiceNode,
      path: readonly Token[],
      mass: number,
      next: ReadonlyMap<Token, number> | undefined,
    ): Promise<void> => {
      if (countOptions(node) === 1) {
        const [only] = node.children.entries();
        if (only) await visit(only[1], [...path, only[0]], mass, undefined);
        else for (const c of node.ends) probabilities[c] = mass / node.ends.length;
        return;
      }
      const distribution = next ?? (await evaluateBranch(node, path));
      const steps = [...node.children.entries()].map(([token, child]) => ({
        p: distribution.get(token) ?? 0,
        child,
        token,
      }));
      const endP = node.ends.length > 0 ? endOfGenerationProbability(distribution, model) : 0;
      const total = steps.reduce((sum, s) => sum + s.p, endP);
      // Nothing legal has any probability (cannot happen with a softmax; guards a NaN): the grammar's steps even.
      const share = (p: number) => (total > 0 ? p / total : 1 / countOptions(node));
      for (const c of node.ends) probabilities[c] = (mass * share(endP)) / node.ends.length;
      for (const step of steps)
        await visit(step.child, [...path, step.token], mass * share(step.p), undefined);
    };
    await visit(tree, [], 1, firstProbabilities);
    // The sequence holds the view again (branches erased), and no label: the route line comes as text.
    slotTokens.retain(plan, [], sequence.contextTokens);
    const best = probabilities.indexOf(Math.max(...probabilities));
    const bestTokens = choiceTokens[best] as Token[];
    const ended = now();
    return {
      result: {
        text: choices[best] as string,
        finishReason: "stop",
        choiceProbabilities: Object.fromEntries(choices.map((c, i) => [c, probabilities[i] as number])),
        usage: {
          promptTokens: fullPrompt.length,
          cachedPromptTokens: cached,
          evaluatedPromptTokens: fullPrompt.length - cached,
          // The label's own tokens: what a decode would have produced and the route line will hold.
          completionTokens: bestTokens.length,
        },
        prefillMs: prefillEnd - started,
        decodeMs: ended - prefillEnd,
      },
      async extendView(afterChoice) {
        const stable = cutAtStableBoundary(afterChoice);
        const after = tokenizePrompt(model, stable);
        try {
          await eraseFrom(sequence, fullPrompt.length);
          await sequence.evaluateWithoutGeneratingNewTokens([...bestTokens, ...after]);
          slotTokens.retain(
            plan,
            [
              { tokens: bestTokens, text: choices[best] as string },
              { tokens: after, text: stable },
            ],
            sequence.contextTokens,
          );
        } catch (error) {
          slotTokens.forget();
          throw error;
        }
      },
    };
  } catch (error) {
    slotTokens.forget();
    throw toEngineError(error, request.signal, "choice scoring");
  }
}

/**
 * Whether a step the grammar allows at `node` is missing from the kept tokens: a child's token, or every end
 * token where a choice ends. Then the distribution is computed again over the whole vocabulary.
 */
function missesLegalStep(node: ChoiceNode, kept: ReadonlyMap<Token, number>, model: LlamaModel): boolean {
  for (const token of node.children.keys()) if (!kept.has(token)) return true;
  return node.ends.length > 0 && endOfGenerationProbability(kept, model) === 0;
}

/** Where a choice may end and another go on: the grammar allows ending, which the model does by an end token. */
function endOfGenerationProbability(kept: ReadonlyMap<Token, number>, model: LlamaModel): number {
  let sum = 0;
  for (const [token, p] of kept) if (model.isEogToken(token)) sum += p;
  return sum;
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
