import { and, asc, eq, gte, lte, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { usageDaily, usageHops } from "../db/usage-tables.ts";
import type { TurnUsage, UsageRecorder } from "../conversation/charge-turn.ts";
import type { UsageReport } from "../usage/usage-report.ts";

/** Attempts at writing one turn's usage; safe to repeat, as the ledger ignores rows it already has. */
const WRITE_ATTEMPTS = 3;
const WRITE_BACKOFF_MS = 250;

/**
 * Usage in D1 (workers/src/db/usage-tables.ts): a turn's hops go into the ledger in one statement, whose trigger adds
 * each new row to the day's rollup; reads sum the rollup. A write that failed (or timed out after landing) is
 * retried, which the ledger's key makes harmless.
 */
export function createD1UsageStore(database: D1Database, now: () => number): UsageRecorder & UsageReport {
  const db = drizzle(database);
  return {
    async record(usage) {
      const rows = toLedgerRows(usage, Math.floor(now() / 1000));
      for (let attempt = 1; ; attempt++) {
        try {
          await db.insert(usageHops).values(rows).onConflictDoNothing();
          return;
        } catch (error) {
          if (attempt >= WRITE_ATTEMPTS) throw error;
          await new Promise((resolve) => setTimeout(resolve, WRITE_BACKOFF_MS * attempt));
        }
      }
    },
    async query(tenantId, query) {
      const t = usageDaily;
      const group = { user: t.endUser, key: t.keyId, day: t.day, adapter: t.adapter }[query.groupBy];
      const conditions: SQL[] = [eq(t.tenantId, tenantId)];
      if (query.from !== undefined) conditions.push(gte(t.day, query.from));
      if (query.to !== undefined) conditions.push(lte(t.day, query.to));
      const total = (column: SQLWrapper) => sql<number>`sum(${column})`.mapWith(Number);
      return db
        .select({
          group,
          requests: total(t.requests),
          hops: total(t.hops),
          inputTokens: total(t.inputTokens),
          cachedInputTokens: total(t.cachedInputTokens),
          outputTokens: total(t.outputTokens),
        })
        .from(t)
        .where(and(...conditions))
        .groupBy(group)
        .orderBy(asc(group));
    },
  };
}

/** The turn counts as one request, on its answer hop (else its first): per-adapter requests add up to turns. */
function toLedgerRows(usage: TurnUsage, createdAt: number): Array<typeof usageHops.$inferInsert> {
  const answer = usage.hops.findIndex((hop) => hop.hop === "answer");
  const carrier = answer === -1 ? 0 : answer;
  return usage.hops.map((hop, index) => ({
    tenantId: usage.tenantId,
    turnId: usage.turnId,
    hop: hop.hop,
    keyId: usage.keyId,
    endUser: usage.endUser,
    adapter: hop.adapter,
    day: usage.day,
    requests: index === carrier ? 1 : 0,
    inputTokens: hop.inputTokens,
    cachedInputTokens: hop.cachedInputTokens,
    outputTokens: hop.outputTokens,
    estimated: hop.estimated ? 1 : 0,
    createdAt,
  }));
}

/**
 * Edge metrics beside the billing rows: with an Analytics Engine binding, one data point per hop (index = tenant;
 * blobs = [hop, adapter, key id, end user]; doubles = [input, cached input, output tokens]). Sampled and
 * best-effort: dashboards read it, invoices read D1.
 */
export function writeUsageDataPoints(dataset: AnalyticsEngineDataset | undefined, usage: TurnUsage): void {
  if (!dataset) return;
  for (const hop of usage.hops)
    dataset.writeDataPoint({
      indexes: [usage.tenantId],
      blobs: [hop.hop, hop.adapter, usage.keyId, usage.endUser],
      doubles: [hop.inputTokens, hop.cachedInputTokens, hop.outputTokens],
    });
}
