import type { TurnMol } from "../../conversation/turn-record.ts";

export interface CriticalPathUsage {
  inputTokens: number;
  cachedTokens: number;
  /** Prompt tokens prefilled and left in the KV slot for the next turn: the cache writes. */
  evaluatedTokens: number;
  outputTokens: number;
}

/**
 * What the client waited for: the route and answer hops. The summary hop runs after the answer is sent and
 * is left out, so `usage` means the same thing on a stream and on a replay.
 */
export function sumCriticalPathUsage(usage: TurnMol["usage"]): CriticalPathUsage | null {
  const hops = [usage.route, usage.answer].filter((hop) => hop !== undefined);
  if (hops.length === 0) return null;
  return hops.reduce<CriticalPathUsage>(
    (sum, hop) => ({
      inputTokens: sum.inputTokens + hop.promptTokens,
      cachedTokens: sum.cachedTokens + hop.cachedPromptTokens,
      evaluatedTokens: sum.evaluatedTokens + hop.evaluatedPromptTokens,
      outputTokens: sum.outputTokens + hop.completionTokens,
    }),
    { inputTokens: 0, cachedTokens: 0, evaluatedTokens: 0, outputTokens: 0 },
  );
}
