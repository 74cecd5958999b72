import { SQL, and, asc, desc, eq, gt, lt, notInArray, or, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import {
  GLOBAL_HARNESS_OWNER,
  harnessLabelHistory,
  harnessLabels,
  harnessVersions,
  type HarnessLabelHistoryRow,
  type HarnessLabelRow,
  type HarnessVersionRow,
} from "../db/harness-tables.ts";
import { auditLog } from "../db/tenant-tables.ts";
import type {
  ArmTally,
  RolloutCounts,
  HarnessLabel,
  HarnessLabelTarget,
  HarnessOwner,
  HarnessRegistryStore,
  HarnessVersion,
  HarnessVersionSummary,
} from "../harness-registry/harness-registry-store.ts";
import type { AuditDraft } from "../tenancy/tenant-store.ts";
import { harnessGuardSettingsSchema, type HarnessGuardSettings } from "../harness-registry/rollout-guard.ts";
import {
  FAILURE_CATEGORIES,
  emptyCategoryCounts,
  type FailureCategory,
} from "../harness-registry/turn-failures.ts";

const dialect = new SQLiteAsyncDialect();
type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

const ownerKey = (owner: HarnessOwner) => (owner === "global" ? GLOBAL_HARNESS_OWNER : owner.tenantId);

function toSummary(row: Omit<HarnessVersionRow, "document" | "seq">): HarnessVersionSummary {
  return {
    scope: row.owner === GLOBAL_HARNESS_OWNER ? "global" : "tenant",
    hash: row.hash,
    bytes: row.bytes,
    parent: row.parent,
    message: row.message,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
  };
}

function toVersion(row: HarnessVersionRow): HarnessVersion {
  return { ...toSummary(row), document: row.document };
}

function toTarget(
  harness: string | null,
  canaryHarness: string | null,
  canaryPercent: number | null,
): HarnessLabelTarget | null {
  if (harness === null) return null;
  return {
    harness,
    canary: canaryHarness === null ? null : { harness: canaryHarness, percent: canaryPercent ?? 0 },
  };
}

function toLabel(row: HarnessLabelRow): HarnessLabel {
  return {
    tenantId: row.tenantId,
    name: row.name,
    harness: row.harness,
    canary: toTarget(row.harness, row.canaryHarness, row.canaryPercent)?.canary ?? null,
    guard: readGuard(row.guard),
    revision: row.revision,
    updatedBy: row.updatedBy,
    updatedAt: row.updatedAt,
  };
}

/** D1 returns raw rows (snake_case) from a batch's SELECT. */
interface RawLabelRow {
  tenant_id: string;
  name: string;
  harness: string;
  canary_harness: string | null;
  canary_percent: number | null;
  guard: string | null;
  revision: number;
  updated_by: string;
  updated_at: number;
}

/**
 * The harness registry in D1. A label's move is one batch (a D1 transaction): its history row takes `from` from the
 * label row as it is inside that transaction, so concurrent moves each record the state they replaced.
 */
export function createD1HarnessRegistryStore(database: D1Database): HarnessRegistryStore {
  const db = drizzle(database);
  const runBatch = (statements: Statement[]) =>
    database.batch(
      statements.map((statement) => {
        const query = statement instanceof SQL ? dialect.sqlToQuery(statement) : statement.toSQL();
        return database.prepare(query.sql).bind(...query.params);
      }),
    );
  const v = harnessVersions;

  /** The versions a viewer sees: its own, and the global ones it does not also hold. */
  const visibleTo = (viewer: HarnessOwner) => {
    if (viewer === "global") return eq(v.owner, GLOBAL_HARNESS_OWNER);
    const own = db.select({ hash: v.hash }).from(v).where(eq(v.owner, viewer.tenantId));
    return or(eq(v.owner, viewer.tenantId), and(eq(v.owner, GLOBAL_HARNESS_OWNER), notInArray(v.hash, own)));
  };

  const getVersion = async (viewer: HarnessOwner, hash: string) => {
    const [row] = await db
      .select()
      .from(v)
      .where(and(eq(v.hash, hash), visibleTo(viewer)))
      .limit(1);
    return row && toVersion(row);
  };

  return {
    async putVersion(draft, audit) {
      const owner = ownerKey(draft.owner);
      const statements: Statement[] = [];
      if (audit) statements.push(appendAuditUnlessVersion(audit, owner, draft.hash));
      statements.push(
        db
          .insert(v)
          .values({ ...draft, owner })
          .onConflictDoNothing({ target: [v.owner, v.hash] }),
      );
      const results = await runBatch(statements);
      const inserted = (results.at(-1)?.meta.changes ?? 0) > 0;
      const [row] = await db
        .select()
        .from(v)
        .where(and(eq(v.owner, owner), eq(v.hash, draft.hash)));
      if (!row) throw new Error(`harness version ${draft.hash} was not stored`);
      return { version: toVersion(row), created: inserted };
    },

    getVersion,

    async listVersions(viewer, query) {
      let anchor: HarnessVersionRow | undefined;
      if (query.after !== undefined) {
        [anchor] = await db
          .select()
          .from(v)
          .where(and(eq(v.hash, query.after), visibleTo(viewer)))
          .limit(1);
        if (!anchor) return { error: "unknown_after" };
      }
      const beyond = query.order === "asc" ? gt : lt;
      const rows = await db
        .select({
          owner: v.owner,
          hash: v.hash,
          bytes: v.bytes,
          parent: v.parent,
          message: v.message,
          createdBy: v.createdBy,
          createdAt: v.createdAt,
        })
        .from(v)
        .where(and(visibleTo(viewer), anchor ? beyond(v.seq, anchor.seq) : undefined))
        .orderBy(query.order === "asc" ? asc(v.seq) : desc(v.seq))
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit).map(toSummary), hasMore: rows.length > query.limit };
    },

    async getLabel(tenantId, name) {
      const [row] = await db
        .select()
        .from(harnessLabels)
        .where(and(eq(harnessLabels.tenantId, tenantId), eq(harnessLabels.name, name)));
      return row && toLabel(row);
    },

    async listLabels(tenantId) {
      const rows = await db
        .select()
        .from(harnessLabels)
        .where(eq(harnessLabels.tenantId, tenantId))
        .orderBy(asc(harnessLabels.name));
      return rows.map(toLabel);
    },

    async moveLabel({ tenantId, name, to, guard, reason, actor, at, audit }) {
      const canaryHarness = to.canary?.harness ?? null;
      const canaryPercent = to.canary?.percent ?? null;
      const guardJson = guard ? JSON.stringify(guard) : null;
      const results = await runBatch([
        sql`INSERT INTO harness_label_history
            (tenant_id, name, revision, from_harness, from_canary_harness, from_canary_percent,
             to_harness, to_canary_harness, to_canary_percent, reason, actor, created_at)
          SELECT ${tenantId}, ${name}, COALESCE(l.revision, 0) + 1, l.harness, l.canary_harness, l.canary_percent,
            ${to.harness}, ${canaryHarness}, ${canaryPercent}, ${reason}, ${actor}, ${at}
          FROM (SELECT 1) LEFT JOIN harness_labels l ON l.tenant_id = ${tenantId} AND l.name = ${name}`,
        db.insert(auditLog).values(audit),
        sql`INSERT INTO harness_labels
            (tenant_id, name, harness, canary_harness, canary_percent, guard, revision, updated_by, updated_at)
          VALUES (${tenantId}, ${name}, ${to.harness}, ${canaryHarness}, ${canaryPercent}, ${guardJson}, 1, ${actor},
            ${at})
          ON CONFLICT (tenant_id, name) DO UPDATE SET
            harness = excluded.harness, canary_harness = excluded.canary_harness,
            canary_percent = excluded.canary_percent, guard = excluded.guard,
            revision = harness_labels.revision + 1,
            updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
        sql`SELECT * FROM harness_labels WHERE tenant_id = ${tenantId} AND name = ${name}`,
      ]);
      const row = results.at(-1)?.results[0] as RawLabelRow | undefined;
      if (!row) throw new Error(`harness label ${name} was not stored`);
      return fromRawLabel(row);
    },

    async recordRolloutOutcome({ tenantId, name, canaryHarness, arm, turnId, failures }) {
      const failed = failures.length > 0 ? 1 : 0;
      const hits = (category: FailureCategory) => (failures.includes(category) ? 1 : 0);
      // The counts only while the turn has no row, then its row: a turn counted already (a repeated report) adds
      // nothing.
      const results = await runBatch([
        sql`INSERT INTO harness_rollout_counts (tenant_id, name, canary_harness, arm, turns, failures, turn_failed,
            genui_rejected, json_output_invalid, tool_arguments_invalid, check_failed, feedback_negative)
          SELECT ${tenantId}, ${name}, ${canaryHarness}, ${arm}, 1, ${failed}, ${hits("turn_failed")},
            ${hits("genui_rejected")}, ${hits("json_output_invalid")}, ${hits("tool_arguments_invalid")},
            ${hits("check_failed")}, 0
          WHERE NOT EXISTS (SELECT 1 FROM harness_rollout_turns WHERE tenant_id = ${tenantId} AND turn_id = ${turnId})
          ON CONFLICT (tenant_id, name, canary_harness, arm) DO UPDATE SET
            turns = turns + 1, failures = failures + excluded.failures,
            turn_failed = turn_failed + excluded.turn_failed,
            genui_rejected = genui_rejected + excluded.genui_rejected,
            json_output_invalid = json_output_invalid + excluded.json_output_invalid,
            tool_arguments_invalid = tool_arguments_invalid + excluded.tool_arguments_invalid,
            check_failed = check_failed + excluded.check_failed`,
        sql`INSERT INTO harness_rollout_turns (tenant_id, turn_id, name, canary_harness, arm, failed)
          VALUES (${tenantId}, ${turnId}, ${name}, ${canaryHarness}, ${arm}, ${failed})
          ON CONFLICT (tenant_id, turn_id) DO NOTHING`,
        selectCounts(tenantId, name, canaryHarness),
      ]);
      return readCounts(results.at(-1)?.results);
    },

    async recordRolloutFeedback({ tenantId, name, canaryHarness, arm, turnId }) {
      // The turn's row as counted under this key, its negative feedback not yet counted: the counts change only
      // then (a failure only if the turn was none), and the row after them, so a second feedback finds nothing.
      const turn = sql`FROM harness_rollout_turns WHERE tenant_id = ${tenantId} AND turn_id = ${turnId}
        AND name = ${name} AND canary_harness = ${canaryHarness} AND arm = ${arm} AND feedback_negative = 0`;
      const results = await runBatch([
        sql`UPDATE harness_rollout_counts SET feedback_negative = feedback_negative + 1,
            failures = failures + (SELECT 1 - failed ${turn})
          WHERE tenant_id = ${tenantId} AND name = ${name} AND canary_harness = ${canaryHarness} AND arm = ${arm}
            AND EXISTS (SELECT 1 ${turn})`,
        sql`UPDATE harness_rollout_turns SET feedback_negative = 1, failed = 1
          WHERE tenant_id = ${tenantId} AND turn_id = ${turnId} AND name = ${name}
            AND canary_harness = ${canaryHarness} AND arm = ${arm} AND feedback_negative = 0`,
        selectCounts(tenantId, name, canaryHarness),
      ]);
      if ((results[0]?.meta.changes ?? 0) === 0) return undefined;
      return readCounts(results.at(-1)?.results);
    },

    async readRolloutCounts(tenantId, name, canaryHarness) {
      const [result] = await runBatch([selectCounts(tenantId, name, canaryHarness)]);
      return readCounts(result?.results);
    },

    async rollBackCanary({ tenantId, name, canaryHarness, reason, actor, at, audit }) {
      // Each statement holds only while the label still carries that canary: a concurrent move wins, and this
      // writes nothing (the history and audit rows come first, reading the label before it changes).
      const carries = sql`EXISTS (SELECT 1 FROM harness_labels WHERE tenant_id = ${tenantId} AND name = ${name}
        AND canary_harness = ${canaryHarness})`;
      const results = await runBatch([
        sql`INSERT INTO harness_label_history
            (tenant_id, name, revision, from_harness, from_canary_harness, from_canary_percent,
             to_harness, to_canary_harness, to_canary_percent, reason, actor, created_at)
          SELECT tenant_id, name, revision + 1, harness, canary_harness, canary_percent,
            harness, NULL, NULL, ${reason}, ${actor}, ${at}
          FROM harness_labels WHERE tenant_id = ${tenantId} AND name = ${name}
            AND canary_harness = ${canaryHarness}`,
        sql`INSERT INTO audit_log (tenant_id, actor, action, target, details, created_at)
          SELECT ${audit.tenantId}, ${audit.actor}, ${audit.action}, ${audit.target},
            ${JSON.stringify(audit.details)}, ${audit.createdAt}
          WHERE ${carries}`,
        sql`UPDATE harness_labels SET canary_harness = NULL, canary_percent = NULL,
            revision = revision + 1, updated_by = ${actor}, updated_at = ${at}
          WHERE tenant_id = ${tenantId} AND name = ${name} AND canary_harness = ${canaryHarness}`,
        sql`SELECT * FROM harness_labels WHERE tenant_id = ${tenantId} AND name = ${name}`,
      ]);
      if ((results[2]?.meta.changes ?? 0) === 0) return undefined;
      const row = results.at(-1)?.results[0] as RawLabelRow | undefined;
      return row && fromRawLabel(row);
    },

    async listLabelHistory(tenantId, name, query) {
      const h = harnessLabelHistory;
      const beyond = query.order === "asc" ? gt : lt;
      const rows = await db
        .select()
        .from(h)
        .where(
          and(
            eq(h.tenantId, tenantId),
            eq(h.name, name),
            query.afterSeq === undefined ? undefined : beyond(h.seq, query.afterSeq),
          ),
        )
        .orderBy(query.order === "asc" ? asc(h.seq) : desc(h.seq))
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit).map(toMove), hasMore: rows.length > query.limit };
    },
  };
}

function selectCounts(tenantId: string, name: string, canaryHarness: string): SQL {
  return sql`SELECT * FROM harness_rollout_counts
    WHERE tenant_id = ${tenantId} AND name = ${name} AND canary_harness = ${canaryHarness}`;
}

/** Both arms from the raw rows of {@link selectCounts}; an arm without a row has zeros. */
function readCounts(results: unknown[] | undefined): RolloutCounts {
  const rows = (results ?? []) as Array<Record<string, unknown> & { arm: string }>;
  const arm = (wanted: "production" | "canary"): ArmTally => {
    const row = rows.find((r) => r.arm === wanted);
    const read = (column: string) => (typeof row?.[column] === "number" ? row[column] : 0);
    const categories = emptyCategoryCounts();
    for (const category of FAILURE_CATEGORIES) categories[category] = read(category);
    return { turns: read("turns"), failures: read("failures"), categories };
  };
  return { production: arm("production"), canary: arm("canary") };
}

function fromRawLabel(row: RawLabelRow): HarnessLabel {
  return toLabel({
    tenantId: row.tenant_id,
    name: row.name,
    harness: row.harness,
    canaryHarness: row.canary_harness,
    canaryPercent: row.canary_percent,
    guard: row.guard,
    revision: row.revision,
    updatedBy: row.updated_by,
    updatedAt: row.updated_at,
  });
}

/** A stored guard that no longer parses (an older shape) reads as the defaults. */
function readGuard(json: string | null): HarnessGuardSettings | null {
  if (json === null) return null;
  try {
    const parsed = harnessGuardSettingsSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function toMove(row: HarnessLabelHistoryRow) {
  const to = toTarget(row.toHarness, row.toCanaryHarness, row.toCanaryPercent);
  if (!to) throw new Error("a label move without a target");
  return {
    seq: row.seq,
    tenantId: row.tenantId,
    name: row.name,
    revision: row.revision,
    from: toTarget(row.fromHarness, row.fromCanaryHarness, row.fromCanaryPercent),
    to,
    reason: row.reason,
    actor: row.actor,
    createdAt: row.createdAt,
  };
}

/** The audit entry for a pushed version, written only when that owner does not hold the hash yet. */
function appendAuditUnlessVersion(draft: AuditDraft, owner: string, hash: string): SQL {
  return sql`INSERT INTO audit_log (tenant_id, actor, action, target, details, created_at)
    SELECT ${draft.tenantId}, ${draft.actor}, ${draft.action}, ${draft.target}, ${JSON.stringify(draft.details)},
      ${draft.createdAt}
    WHERE NOT EXISTS (SELECT 1 FROM harness_versions WHERE owner = ${owner} AND hash = ${hash})`;
}
