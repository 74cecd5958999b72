import type { HopFacts } from "../db/timeline-event.ts";
import type { GenerateDeps, GenerateTarget } from "./generate-deps.ts";
import { generateOnce } from "./generate-once.ts";

export interface ChoiceQuestion extends GenerateTarget {
  /** What the request is for: its id's middle part and its priority class (`route`). */
  purpose: "route";
  choices: readonly string[];
  /** What the slot's next prompt holds right after the choice (see the wire's choice constraint). */
  afterChoice?: string | undefined;
  reasoningMaxTokens: number;
  /** Reasoning and the choice together. */
  maxTokens: number;
  timeoutMs: number;
}

export interface ChoiceAnswer {
  /** One of the choices. */
  value: string;
  /** The engine's probability of `value` among the choices, when it gave one. */
  confidence?: number;
  /** Everything decoded, reasoning included. */
  text: string;
  facts: HopFacts;
}

/**
 * One of `choices`, decoded greedily under a choice constraint on the node placement picks (failing over to
 * others), with every choice's probability where the engine scores them. Rejects with a typed MolWireError.
 */
export async function generateChoice(deps: GenerateDeps, q: ChoiceQuestion): Promise<ChoiceAnswer> {
  const { result, facts } = await generateOnce(deps, q, {
    constraint: {
      type: "choice",
      choices: [...q.choices],
      reasoningMaxTokens: q.reasoningMaxTokens,
      ...(q.afterChoice === undefined ? {} : { afterChoice: q.afterChoice }),
    },
    sampling: { maxTokens: q.maxTokens, temperature: 0, topP: 1, topK: 1 },
    return: { choiceProbabilities: true },
    timeoutMs: q.timeoutMs,
  });
  const value = result.choice?.value ?? result.text.trim();
  const confidence = result.choice?.probabilities?.[value];
  return { value, ...(confidence === undefined ? {} : { confidence }), text: result.text, facts };
}
