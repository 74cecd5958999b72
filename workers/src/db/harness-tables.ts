import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * D1: the harness registry. Versions are content-addressed (a version's id is the `sha256:` of its canonical JSON),
 * stored per owner: a tenant's own, or the global ones (owner {@link GLOBAL_HARNESS_OWNER}) the admin token manages
 * and every tenant sees. Labels point a tenant's name at a version (and optionally a canary); each move appends
 * one row to the label's history, in the same batch.
 */

/** The owner of global versions: not a tenant id (those are `ten_…`, or `dev`). */
export const GLOBAL_HARNESS_OWNER = "*";

export const harnessVersions = sqliteTable(
  "harness_versions",
  {
    /** Insertion order: what lists page by. */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    /** The tenant id, or {@link GLOBAL_HARNESS_OWNER}. */
    owner: text("owner").notNull(),
    /** `sha256:<hex>` of `document`. */
    hash: text("hash").notNull(),
    /** The canonical JSON the hash is over. */
    document: text("document").notNull(),
    /** UTF-8 bytes of `document`. */
    bytes: integer("bytes").notNull(),
    /** The version this one was derived from (a hash the owner could see when it was pushed). */
    parent: text("parent"),
    message: text("message"),
    /** `admin`, or the key id that pushed it. */
    createdBy: text("created_by").notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("harness_versions_by_owner_hash").on(t.owner, t.hash)],
);

export const harnessLabels = sqliteTable(
  "harness_labels",
  {
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    harness: text("harness").notNull(),
    canaryHarness: text("canary_harness"),
    /** 0–100; null without a canary. */
    canaryPercent: integer("canary_percent"),
    /** The rollout guard's settings (JSON of `HarnessGuardSettings`); null: the defaults. */
    guard: text("guard"),
    /** How many times the label moved: 1 after it was first set. */
    revision: integer("revision").notNull(),
    updatedBy: text("updated_by").notNull(),
    /** Unix seconds. */
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name] })],
);

/** Append-only (a migration's triggers refuse UPDATE and DELETE): every move of every label. */
export const harnessLabelHistory = sqliteTable(
  "harness_label_history",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    /** The label's `revision` after this move. */
    revision: integer("revision").notNull(),
    /** Where the label pointed before; all null for its first move. */
    fromHarness: text("from_harness"),
    fromCanaryHarness: text("from_canary_harness"),
    fromCanaryPercent: integer("from_canary_percent"),
    toHarness: text("to_harness").notNull(),
    toCanaryHarness: text("to_canary_harness"),
    toCanaryPercent: integer("to_canary_percent"),
    /** Why, as the mover said it. */
    reason: text("reason"),
    actor: text("actor").notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("harness_label_history_by_label").on(t.tenantId, t.name, t.seq)],
);

export type HarnessVersionRow = typeof harnessVersions.$inferSelect;
export type HarnessLabelRow = typeof harnessLabels.$inferSelect;
export type HarnessLabelHistoryRow = typeof harnessLabelHistory.$inferSelect;

/**
 * The guarded rollout's evidence: per label, canary version and arm, how many labelled turns finished and how many
 * of them failed (harness-registry/rollout-guard.ts). Counted as each turn finishes; a new canary starts at zero.
 */
export const harnessRolloutCounts = sqliteTable(
  "harness_rollout_counts",
  {
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    /** The canary version the label carried when the turn ran (production turns are counted against it too). */
    canaryHarness: text("canary_harness").notNull(),
    arm: text("arm", { enum: ["production", "canary"] }).notNull(),
    turns: integer("turns").notNull(),
    /** Failed turns: what the rule reads (a turn is one failure however many categories below it hits). */
    failures: integer("failures").notNull(),
    // Failed turns by category (harness-registry/turn-failures.ts); a turn may be in several.
    turnFailed: integer("turn_failed").notNull().default(0),
    genuiRejected: integer("genui_rejected").notNull().default(0),
    jsonOutputInvalid: integer("json_output_invalid").notNull().default(0),
    toolArgumentsInvalid: integer("tool_arguments_invalid").notNull().default(0),
    checkFailed: integer("check_failed").notNull().default(0),
    feedbackNegative: integer("feedback_negative").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name, t.canaryHarness, t.arm] })],
);

/**
 * The turns the guard counted, one row each: what the user's feedback on a turn later needs to count against the
 * same canary and arm, once (a turn already failed is not a second failure; a second negative feedback is none).
 */
export const harnessRolloutTurns = sqliteTable(
  "harness_rollout_turns",
  {
    tenantId: text("tenant_id").notNull(),
    turnId: text("turn_id").notNull(),
    name: text("name").notNull(),
    canaryHarness: text("canary_harness").notNull(),
    arm: text("arm", { enum: ["production", "canary"] }).notNull(),
    /** 1 when the turn counts as a failure (its own categories, or negative feedback since). */
    failed: integer("failed").notNull(),
    /** 1 once the turn's negative feedback was counted. */
    feedbackNegative: integer("feedback_negative").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.turnId] })],
);
