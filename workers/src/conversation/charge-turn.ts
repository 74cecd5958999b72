import type { Usage } from "../../../schema/wire/v1/index.ts";
import type { AnswerProgress } from "./turn-hops.ts";
import type { TurnMol } from "./turn-record.ts";

/** Characters per token of the estimate used where no node reported usage (English text averages about 4). */
const ESTIMATED_CHARS_PER_TOKEN = 4;

/** The tokens one turn is charged, per hop; `estimated` says the answer's figure is ours, not the node's. */
export interface TurnCharge {
  turnId: string;
  tokens: number;
  hops: { route: number; answer: number; summary: number };
  estimated: boolean;
}

/**
 * Where a turn's tokens are counted against its tenant (the per-minute bucket and the monthly quota). The Durable
 * Object's meter calls the tenant limiter; a charge that cannot be recorded must not fail the turn.
 */
export interface UsageMeter {
  record(tenantId: string, charge: TurnCharge): Promise<void>;
}

/** An answer hop that ended without the node's figures: what it was asked and how far it got. */
export interface PartialAnswer extends AnswerProgress {
  promptChars: number;
}

/**
 * Every token a turn's hops used (prompt, cached included, and completion), from the nodes' own usage figures.
 * An answer that was cancelled or failed has none: when a node had the prompt (or streamed text), it is charged
 * an estimate of the prompt plus the text it streamed, at {@link ESTIMATED_CHARS_PER_TOKEN} characters a token.
 */
export function measureTurnCharge(mol: TurnMol, partial?: PartialAnswer): TurnCharge {
  const route = sumUsage(mol.usage.route);
  const summary = sumUsage(mol.usage.summary);
  const estimated = !mol.usage.answer && partial !== undefined && estimatePartialAnswer(partial) > 0;
  const answer = mol.usage.answer ? sumUsage(mol.usage.answer) : partial ? estimatePartialAnswer(partial) : 0;
  return {
    turnId: mol.turnId,
    tokens: route + answer + summary,
    hops: { route, answer, summary },
    estimated,
  };
}

function sumUsage(usage: Usage | undefined): number {
  return usage ? usage.promptTokens + usage.completionTokens : 0;
}

function estimatePartialAnswer(partial: PartialAnswer): number {
  if (!partial.nodeStarted && partial.streamedChars === 0) return 0;
  return estimateTokens(partial.promptChars) + estimateTokens(partial.streamedChars);
}

function estimateTokens(chars: number): number {
  return Math.ceil(chars / ESTIMATED_CHARS_PER_TOKEN);
}
