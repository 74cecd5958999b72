import type { HarnessChoice } from "./choose-turn-harness.ts";
import type {
  HarnessLabel,
  HarnessRegistryStore,
  RolloutCounts,
  RolloutKey,
} from "./harness-registry-store.ts";
import type { FailureCategory } from "./turn-failures.ts";
import { decideRollout, describeRollback, type RolloutDecision } from "./rollout-guard.ts";

/**
 * The guarded rollout, wired: each finished turn that a label chose (either arm, while the label has a canary) is
 * counted in the store, with its failure categories (turn-failures.ts), and the label's rule (rollout-guard.ts) is
 * asked; so is a user's negative feedback on such a turn, later. When the rule says the canary is worse, the canary
 * is removed through the store (label, history entry and audit entry together, only if the label still carries
 * that canary) and `rolledBack` is told, once, by whichever count crossed the boundary.
 */

/** The guard's actor in the label's history and the audit log. */
export const GUARD_ACTOR = "guard";

export interface TurnOutcome {
  tenantId: string;
  turnId: string;
  /** The version the turn ran. */
  harnessHash: string;
  choice: HarnessChoice;
  /** Its failure categories (turn-failures.ts): empty for a turn that answered and passed its checks. */
  failures: readonly FailureCategory[];
}

/** The user's negative feedback on a stored turn: the turn as its record names it. */
export interface TurnFeedback {
  tenantId: string;
  turnId: string;
  harnessHash: string;
  choice: HarnessChoice;
}

/** What the turn loop and the feedback route report to; a failure here never touches the turn. */
export interface TurnOutcomeRecorder {
  record(outcome: TurnOutcome): Promise<void>;
  /**
   * Counts negative feedback against the turn's arm, once per turn, and asks the rule (which may roll back).
   * True when it counted: the label still carries the canary the turn was counted under, on the same versions.
   */
  recordFeedback(feedback: TurnFeedback): Promise<boolean>;
}

export interface RollbackNotice {
  tenantId: string;
  label: HarnessLabel;
  /** The canary that was removed. */
  canaryHarness: string;
  reason: string;
  decision: RolloutDecision;
  /** Unix seconds. */
  at: number;
}

export function createRolloutGuard(deps: {
  store: Pick<
    HarnessRegistryStore,
    "getLabel" | "recordRolloutOutcome" | "recordRolloutFeedback" | "rollBackCanary"
  >;
  now: () => number;
  rolledBack: (notice: RollbackNotice) => Promise<void>;
}): TurnOutcomeRecorder {
  /**
   * The key a turn of this choice and version counts under, or undefined when it is no evidence: no label chose
   * it, the label has no canary now, or it ran a version the label no longer names on that arm (moved since).
   */
  const keyOf = async (
    tenantId: string,
    harnessHash: string,
    choice: HarnessChoice,
  ): Promise<{ key: RolloutKey; label: HarnessLabel } | undefined> => {
    const { label: name, arm } = choice;
    if (name === null || arm === null) return undefined;
    // The counts are kept against the canary the label carried for this turn; a rollback holds only while the
    // label still carries it, so a label read from a cache a moment old cannot undo a newer move.
    const label = await deps.store.getLabel(tenantId, name);
    const canary = label?.canary;
    if (!label || !canary) return undefined;
    if (harnessHash !== (arm === "canary" ? canary.harness : label.harness)) return undefined;
    return { key: { tenantId, name, canaryHarness: canary.harness, arm }, label };
  };

  /** The rule on the counts after a turn or a feedback: a canary found worse is removed, and told of once. */
  const decide = async (key: RolloutKey, label: HarnessLabel, counts: RolloutCounts): Promise<void> => {
    const { tenantId, name, canaryHarness } = key;
    const decision = decideRollout(counts.production, counts.canary, label.guard ?? undefined);
    if (!decision.rollBack) return;
    const reason = describeRollback(decision);
    const at = Math.floor(deps.now() / 1000);
    const moved = await deps.store.rollBackCanary({
      tenantId,
      name,
      canaryHarness,
      reason,
      actor: GUARD_ACTOR,
      at,
      audit: {
        tenantId,
        actor: GUARD_ACTOR,
        action: "harness_label.rolled_back",
        target: name,
        details: {
          harness: label.harness,
          canary: canaryHarness,
          reason,
          llr: decision.llr,
          boundary: decision.boundary,
          production: decision.production,
          canary_counts: decision.canary,
        },
        createdAt: at,
      },
    });
    if (moved) await deps.rolledBack({ tenantId, label: moved, canaryHarness, reason, decision, at });
  };

  return {
    async record({ tenantId, turnId, harnessHash, choice, failures }) {
      const found = await keyOf(tenantId, harnessHash, choice);
      if (!found) return;
      const counts = await deps.store.recordRolloutOutcome({ ...found.key, turnId, failures });
      await decide(found.key, found.label, counts);
    },
    async recordFeedback({ tenantId, turnId, harnessHash, choice }) {
      const found = await keyOf(tenantId, harnessHash, choice);
      if (!found) return false;
      const counts = await deps.store.recordRolloutFeedback({ ...found.key, turnId });
      if (!counts) return false;
      await decide(found.key, found.label, counts);
      return true;
    },
  };
}
