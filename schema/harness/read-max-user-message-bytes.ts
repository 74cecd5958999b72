import type { HarnessDocument } from "./harness-settings.ts";

/** A user message may take at most this share of the smallest specialist budget. */
export const MAX_USER_MESSAGE_BUDGET_SHARE = 0.25;

/**
 * The largest user message (UTF-8 bytes) the harness accepts; the API answers 400 above it. The harness
 * check guarantees a message this large fits every view next to the header and the turn's reserve.
 */
export function readMaxUserMessageBytes(harness: HarnessDocument): number {
  const budgets = Object.values(harness.specialists).map((s) => s.viewBudgetBytes);
  return Math.floor(Math.min(...budgets) * MAX_USER_MESSAGE_BUDGET_SHARE);
}
