import type { Usage } from "../../../schema/wire/v2/index.ts";
import type { UsageAttribution } from "./conversation-rpc.ts";
import type { StreamProgress } from "../generate/stream-text.ts";
import type { TurnMol, TurnRecord } from "./turn-record.ts";

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

/** One hop's tokens as usage reports show them: input includes the cached part; total = input + output. */
export interface HopUsage {
  hop: "route" | "answer" | "summary";
  adapter: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** The answer of a cancelled or failed turn: the same estimate {@link measureTurnCharge} charges. */
  estimated: boolean;
}

/** A turn's usage, attributed: tenant, key, end user, and the UTC day the turn started (`YYYY-MM-DD`). */
export interface TurnUsage {
  tenantId: string;
  turnId: string;
  keyId: string;
  /** `safety_identifier`, else `user`, of the request; empty when it sent neither. */
  endUser: string;
  day: string;
  hops: HopUsage[];
}

/**
 * Where a turn's usage is reported by tenant, key and end user (D1 in production). Recording one turn twice must
 * count it once: the turn loop records each turn once, and a store retries a failed write.
 */
export interface UsageRecorder {
  record(usage: TurnUsage): Promise<void>;
}

/** An answer hop that ended without the node's figures: what it was asked and how far it got. */
export interface PartialAnswer extends StreamProgress {
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

/**
 * The hops of a turn, one entry each that used tokens: the router's on the router adapter, answer and summary on
 * the specialist's. Figures are the nodes' (the same the API returns in `mol.usage`); an answer the node never
 * reported is the estimate the turn is charged.
 */
export function measureTurnUsage(
  turn: TurnRecord,
  partial: PartialAnswer | undefined,
  context: { tenantId: string; attribution?: UsageAttribution | undefined; routerAdapter: string },
): TurnUsage {
  const { usage, adapter } = turn.mol;
  const hops: HopUsage[] = [];
  const add = (hop: HopUsage["hop"], on: string, figures: Usage | undefined) => {
    if (figures)
      hops.push({
        hop,
        adapter: on,
        inputTokens: figures.promptTokens,
        cachedInputTokens: figures.cachedPromptTokens,
        outputTokens: figures.completionTokens,
        estimated: false,
      });
  };
  add("route", context.routerAdapter, usage.route);
  add("answer", adapter, usage.answer);
  if (!usage.answer && partial && estimatePartialAnswer(partial) > 0)
    hops.push({
      hop: "answer",
      adapter,
      inputTokens: estimateTokens(partial.promptChars),
      cachedInputTokens: 0,
      outputTokens: estimateTokens(partial.streamedChars),
      estimated: true,
    });
  add("summary", adapter, usage.summary);
  return {
    tenantId: context.tenantId,
    turnId: turn.turnId,
    keyId: context.attribution?.keyId ?? "",
    endUser: context.attribution?.endUser ?? "",
    day: new Date(turn.createdAt * 1000).toISOString().slice(0, 10),
    hops,
  };
}
