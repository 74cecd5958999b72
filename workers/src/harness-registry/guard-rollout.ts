import type { TurnRecord } from "../conversation/turn-record.ts";
import type { HarnessChoice } from "./choose-turn-harness.ts";
import type { HarnessLabel, HarnessRegistryStore } from "./harness-registry-store.ts";
import { decideRollout, describeRollback, type RolloutDecision } from "./rollout-guard.ts";

/**
 * The guarded rollout, wired: each finished turn that a label chose (either arm, while the label has a canary) is
 * counted in the store, and the label's rule (rollout-guard.ts) is asked; when it says the canary is worse, the
 * canary is removed through the store (label, history entry and audit entry together, only if the label still
 * carries that canary) and `rolledBack` is told, once, by whichever turn's count crossed the boundary.
 */

/** The guard's actor in the label's history and the audit log. */
export const GUARD_ACTOR = "guard";

export interface TurnOutcome {
  tenantId: string;
  /** The version the turn ran. */
  harnessHash: string;
  choice: HarnessChoice;
  failed: boolean;
}

/** What the turn loop reports to; a failure here never touches the turn. */
export interface TurnOutcomeRecorder {
  record(outcome: TurnOutcome): Promise<void>;
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

/** A turn counts as failed when it failed, or a check on its answer did (GenUI rejected, a step's `fail`). */
export function readTurnFailed(turn: TurnRecord, checkFailed: boolean): boolean | undefined {
  if (turn.status === "cancelled" || turn.status === "in_progress") return undefined;
  return turn.status === "failed" || turn.mol.genui?.status === "rejected" || checkFailed;
}

export function createRolloutGuard(deps: {
  store: Pick<HarnessRegistryStore, "getLabel" | "recordRolloutOutcome" | "rollBackCanary">;
  now: () => number;
  rolledBack: (notice: RollbackNotice) => Promise<void>;
}): TurnOutcomeRecorder {
  return {
    async record({ tenantId, harnessHash, choice, failed }) {
      const { label: name, arm } = choice;
      if (name === null || arm === null) return;
      // The counts are kept against the canary the label carried for this turn; a rollback holds only while the
      // label still carries it, so a label read from a cache a moment old cannot undo a newer move.
      const label = await deps.store.getLabel(tenantId, name);
      const canary = label?.canary;
      if (!label || !canary) return;
      // A turn that ran a version the label no longer names (moved since) is no evidence about this canary.
      if (harnessHash !== (arm === "canary" ? canary.harness : label.harness)) return;
      const counts = await deps.store.recordRolloutOutcome({
        tenantId,
        name,
        canaryHarness: canary.harness,
        arm,
        failed,
      });
      const decision = decideRollout(counts.production, counts.canary, label.guard ?? undefined);
      if (!decision.rollBack) return;
      const reason = describeRollback(decision);
      const at = Math.floor(deps.now() / 1000);
      const moved = await deps.store.rollBackCanary({
        tenantId,
        name,
        canaryHarness: canary.harness,
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
            canary: canary.harness,
            reason,
            llr: decision.llr,
            boundary: decision.boundary,
            production: decision.production,
            canary_counts: decision.canary,
          },
          createdAt: at,
        },
      });
      if (moved)
        await deps.rolledBack({
          tenantId,
          label: moved,
          canaryHarness: canary.harness,
          reason,
          decision,
          at,
        });
    },
  };
}
