import type { AuditDraft, Page } from "../tenancy/tenant-store.ts";
import type { ArmCounts, HarnessGuardSettings } from "./rollout-guard.ts";
import type { FailureCategory, FailureCategoryCounts } from "./turn-failures.ts";

/**
 * The harness registry's storage, a capability type (D1 in production: cloudflare/d1-harness-registry-store.ts).
 * A version belongs to a tenant or is global; a tenant sees its own and the global ones, its own first where it
 * holds the same hash. Labels are a tenant's own.
 */

/** Who owns a version: a tenant (by id) or everyone. */
export type HarnessOwner = { tenantId: string } | "global";

export interface HarnessVersionDraft {
  owner: HarnessOwner;
  /** `sha256:<hex>` of `document`. */
  hash: string;
  /** The canonical JSON. */
  document: string;
  bytes: number;
  parent: string | null;
  message: string | null;
  /** `admin` or the key id. */
  createdBy: string;
  /** Unix seconds. */
  createdAt: number;
}

export interface HarnessVersionSummary extends Omit<HarnessVersionDraft, "owner" | "document"> {
  scope: "tenant" | "global";
}

export interface HarnessVersion extends HarnessVersionSummary {
  document: string;
}

/** Where a label sends turns: its version, and optionally a canary that takes `percent` of conversations. */
export interface HarnessLabelTarget {
  harness: string;
  canary: { harness: string; percent: number } | null;
}

export interface HarnessLabel extends HarnessLabelTarget {
  tenantId: string;
  name: string;
  /** The rollout guard's settings as set with the label; null: the defaults. */
  guard: HarnessGuardSettings | null;
  /** 1 after the label's first move, one more each move. */
  revision: number;
  updatedBy: string;
  /** Unix seconds. */
  updatedAt: number;
}

/** One move of a label, as its history keeps it. */
export interface HarnessLabelMove {
  /** Increasing across the whole database: a cursor, not a count. */
  seq: number;
  tenantId: string;
  name: string;
  revision: number;
  /** Null for the label's first move. */
  from: HarnessLabelTarget | null;
  to: HarnessLabelTarget;
  reason: string | null;
  actor: string;
  createdAt: number;
}

/** One arm's evidence against a canary: turns and failed turns (what the rule reads), and failures by category. */
export interface ArmTally extends ArmCounts {
  categories: FailureCategoryCounts;
}

/** Both arms' evidence against one canary version of a label. */
export interface RolloutCounts {
  production: ArmTally;
  canary: ArmTally;
}

/** Where a counted turn's evidence goes: the label, the canary it carried, and the arm that ran the turn. */
export interface RolloutKey {
  tenantId: string;
  name: string;
  canaryHarness: string;
  arm: "production" | "canary";
}

export interface PageQuery {
  limit: number;
  order: "asc" | "desc";
}

export interface HarnessRegistryStore {
  /**
   * Stores the version unless its owner already holds that hash; either way returns what is stored (the first
   * push's parent and message). `audit` is appended with a tenant's version, only when it is inserted.
   */
  putVersion(
    draft: HarnessVersionDraft,
    audit?: AuditDraft,
  ): Promise<{ version: HarnessVersion; created: boolean }>;
  /** The tenant's own version of that hash, else the global one; `"global"` looks only among the global ones. */
  getVersion(viewer: HarnessOwner, hash: string): Promise<HarnessVersion | undefined>;
  /** The versions `viewer` sees, each hash once; `after` is a hash from a previous page. Seq order. */
  listVersions(
    viewer: HarnessOwner,
    query: PageQuery & { after?: string | undefined },
  ): Promise<Page<HarnessVersionSummary> | { error: "unknown_after" }>;
  getLabel(tenantId: string, name: string): Promise<HarnessLabel | undefined>;
  /** The tenant's labels by name. */
  listLabels(tenantId: string): Promise<HarnessLabel[]>;
  /**
   * Points the label at `to`: the label, its history entry (from what it pointed at, in the same transaction)
   * and the audit entry are written together or not at all. Returns the label as moved.
   */
  moveLabel(move: {
    tenantId: string;
    name: string;
    to: HarnessLabelTarget;
    /** The guard's settings to keep with the label (null: the defaults). */
    guard?: HarnessGuardSettings | null | undefined;
    reason: string | null;
    actor: string;
    at: number;
    audit: AuditDraft;
  }): Promise<HarnessLabel>;
  /**
   * Counts one finished turn of the label's `arm` against its canary `canaryHarness` (once per turn id: a repeat
   * changes nothing): a turn, a failure when `failures` is not empty, and one per category in it. Returns both
   * arms' counts after it (one transaction).
   */
  recordRolloutOutcome(
    outcome: RolloutKey & { turnId: string; failures: readonly FailureCategory[] },
  ): Promise<RolloutCounts>;
  /**
   * Counts the user's negative feedback on a turn counted under the same key: `feedback_negative`, and a failure
   * when the turn was not one already. Only the first per turn counts; undefined when it does not (the turn was
   * not counted under that key, or its negative feedback already was). One transaction.
   */
  recordRolloutFeedback(feedback: RolloutKey & { turnId: string }): Promise<RolloutCounts | undefined>;
  /** Both arms' counts against the label's canary `canaryHarness` (zeros before any turn). */
  readRolloutCounts(tenantId: string, name: string, canaryHarness: string): Promise<RolloutCounts>;
  /**
   * Removes the label's canary if it is still `canaryHarness` (else undefined: someone moved it first), with its
   * history entry and audit entry, all in one transaction. Returns the label as moved.
   */
  rollBackCanary(move: {
    tenantId: string;
    name: string;
    canaryHarness: string;
    reason: string;
    actor: string;
    at: number;
    audit: AuditDraft;
  }): Promise<HarnessLabel | undefined>;
  /** Newest first by default; `afterSeq` is exclusive. */
  listLabelHistory(
    tenantId: string,
    name: string,
    query: PageQuery & { afterSeq?: number | undefined },
  ): Promise<Page<HarnessLabelMove>>;
}
