import { DEFAULT_GUARD_SETTINGS, decideRollout } from "../../harness-registry/rollout-guard.ts";
import type {
  ArmTally,
  RolloutCounts,
  HarnessLabel,
  HarnessLabelMove,
  HarnessLabelTarget,
  HarnessVersion,
  HarnessVersionSummary,
} from "../../harness-registry/harness-registry-store.ts";
import type { JsonPatchOperation } from "../../harness-registry/diff-json.ts";

export interface HarnessVersionObject {
  id: string;
  object: "harness";
  hash: string;
  /** `tenant`: the caller's own; `global`: the operator's, seen by every tenant. */
  scope: "tenant" | "global";
  parent: string | null;
  message: string | null;
  bytes: number;
  created_by: string;
  created_at: number;
  /** Only when one version is read: lists leave it out. */
  document?: unknown;
}

export function formatHarnessVersion(version: HarnessVersionSummary | HarnessVersion): HarnessVersionObject {
  return {
    id: version.hash,
    object: "harness",
    hash: version.hash,
    scope: version.scope,
    parent: version.parent,
    message: version.message,
    bytes: version.bytes,
    created_by: version.createdBy,
    created_at: version.createdAt,
    ...("document" in version ? { document: JSON.parse(version.document) as unknown } : {}),
  };
}

interface LabelTargetObject {
  harness: string;
  canary: { harness: string; percent: number } | null;
}

const formatTarget = (target: HarnessLabelTarget): LabelTargetObject => ({
  harness: target.harness,
  canary: target.canary ? { harness: target.canary.harness, percent: target.canary.percent } : null,
});

export function formatHarnessLabel(label: HarnessLabel) {
  return {
    id: label.name,
    object: "harness.label" as const,
    name: label.name,
    ...formatTarget(label),
    // The settings in force: the label's own, else the defaults.
    guard: label.guard ?? DEFAULT_GUARD_SETTINGS,
    revision: label.revision,
    updated_by: label.updatedBy,
    updated_at: label.updatedAt,
  };
}

/** An arm's evidence as the guard endpoint shows it: turns, failed turns, and failures by category. */
function formatArmTally(tally: ArmTally) {
  return { turns: tally.turns, failures: tally.failures, categories: tally.categories };
}

/**
 * `GET /v1/harness-labels/{name}/guard`: the label's canary, the guard's settings in force, both arms' counts against
 * that canary and the rule's statistic on them now (rollout-guard.ts); `counts` and `statistic` are null while the
 * label has no canary (there is nothing to decide).
 */
export function formatHarnessGuard(label: HarnessLabel, counts: RolloutCounts | null) {
  const settings = label.guard ?? DEFAULT_GUARD_SETTINGS;
  const decision = counts && decideRollout(counts.production, counts.canary, settings);
  return {
    object: "harness.label.guard" as const,
    label: label.name,
    ...formatTarget(label),
    settings,
    counts: counts && {
      production: formatArmTally(counts.production),
      canary: formatArmTally(counts.canary),
    },
    statistic: decision && {
      llr: decision.llr,
      boundary: decision.boundary,
      p0: decision.p0,
      p1: decision.p1,
      roll_back: decision.rollBack,
    },
  };
}

const MOVE_ID = /^hlm_([1-9][0-9]{0,14})$/;

/** The history entry's sequence number behind an `hlm_<seq>` id, or undefined for anything else. */
export function readLabelMoveSeq(id: string): number | undefined {
  const digits = MOVE_ID.exec(id)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

export function formatHarnessLabelMove(move: HarnessLabelMove) {
  return {
    id: `hlm_${move.seq}`,
    object: "harness.label.move" as const,
    label: move.name,
    revision: move.revision,
    from: move.from ? formatTarget(move.from) : null,
    to: formatTarget(move.to),
    reason: move.reason,
    actor: move.actor,
    created_at: move.createdAt,
  };
}

export function formatHarnessDiff(from: string, to: string, patch: JsonPatchOperation[]) {
  return { object: "harness.diff" as const, from, to, patch };
}
