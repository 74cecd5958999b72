import type { TimelineEventOf } from "../db/timeline-event.ts";
import type { TurnRecord } from "../conversation/turn-record.ts";

/**
 * Why a turn counts as a failure for the rollout guard, by category. The guard's rule counts turns (a turn is one
 * failure however many categories it hits); the categories are counted beside it, so an operator can read what a
 * canary breaks, not only that it does.
 *
 * - `turn_failed`: the turn failed (a hop, or its program ended without an answer).
 * - `genui_rejected`: the GenUI validator rejected the answer's component.
 * - `json_output_invalid`, `tool_arguments_invalid`: an output-check step's `fail` verdict, by its `data.check`
 *   (`json_output`, `tool_arguments`).
 * - `check_failed`: any other step's `fail` verdict (a check of another kind, a step that threw after the answer).
 * - `feedback_negative`: the user's negative feedback on the turn, after it was counted.
 */
export const FAILURE_CATEGORIES = [
  "turn_failed",
  "genui_rejected",
  "json_output_invalid",
  "tool_arguments_invalid",
  "check_failed",
  "feedback_negative",
] as const;

export type FailureCategory = (typeof FAILURE_CATEGORIES)[number];

/** Failed turns per category (a turn may be in several). */
export type FailureCategoryCounts = Record<FailureCategory, number>;

export function emptyCategoryCounts(): FailureCategoryCounts {
  return Object.fromEntries(FAILURE_CATEGORIES.map((category) => [category, 0])) as FailureCategoryCounts;
}

/**
 * The category of a step event, or undefined when it is no failure. Output-check steps name their check in
 * `data.check`; any other `fail` verdict is `check_failed`.
 */
export function categorizeStepEvent(event: TimelineEventOf<"step">): FailureCategory | undefined {
  if (event.verdict !== "fail") return undefined;
  const check = event.data?.["check"];
  if (check === "json_output") return "json_output_invalid";
  if (check === "tool_arguments") return "tool_arguments_invalid";
  return "check_failed";
}

/**
 * A finished turn's failure categories, each once and in {@link FAILURE_CATEGORIES} order: empty for a turn that
 * answered and passed its checks, undefined for one the guard does not count (cancelled, or still running).
 */
export function readTurnFailures(
  turn: TurnRecord,
  stepFailures: readonly FailureCategory[],
): FailureCategory[] | undefined {
  if (turn.status === "cancelled" || turn.status === "in_progress") return undefined;
  const found = new Set<FailureCategory>(stepFailures);
  if (turn.status === "failed") found.add("turn_failed");
  if (turn.mol.genui?.status === "rejected") found.add("genui_rejected");
  return FAILURE_CATEGORIES.filter((category) => found.has(category));
}
