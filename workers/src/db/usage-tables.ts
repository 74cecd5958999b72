import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Token usage by tenant, key, end user, adapter and UTC day (D1). Two tables, because a turn's usage is written
 * from its conversation's Durable Object after the turn, and that write may be retried:
 *
 * - `usage_hops` is the ledger: one row per (tenant, turn, hop), inserted with ON CONFLICT DO NOTHING, so writing
 *   a turn's usage twice leaves one row. Updates are refused (a migration's trigger).
 * - `usage_daily` is what the usage API reads: one row per (tenant, day, key, end user, adapter). A trigger on the
 *   ledger's INSERT adds each new hop to it in the same statement, and an ignored (duplicate) insert fires no
 *   trigger, so the rollup counts every hop exactly once without the code ever reading before it writes.
 *
 * Ledger rows may be pruned after the billing period closes (deletes do not touch the rollup).
 */
export const usageHops = sqliteTable(
  "usage_hops",
  {
    tenantId: text("tenant_id").notNull(),
    turnId: text("turn_id").notNull(),
    /** `route`, `answer` or `summary`. */
    hop: text("hop", { enum: ["route", "answer", "summary"] }).notNull(),
    /** The API key that started the turn; `hook:<endpoint id>` for an inbound webhook's turn. */
    keyId: text("key_id").notNull(),
    /** The request's `safety_identifier` (else `user`); empty when it sent neither. */
    endUser: text("end_user").notNull(),
    adapter: text("adapter").notNull(),
    /** UTC day the turn started, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    /** 1 on the one hop that stands for the turn (its answer, else its first hop), 0 on the others. */
    requests: integer("requests").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    cachedInputTokens: integer("cached_input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    /** 1 when the figures are the edge's estimate (a cancelled or failed answer the node never reported). */
    estimated: integer("estimated").notNull(),
    /** Unix seconds the row was written. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.turnId, t.hop] }),
    index("usage_hops_by_time").on(t.createdAt),
  ],
);

export const usageDaily = sqliteTable(
  "usage_daily",
  {
    tenantId: text("tenant_id").notNull(),
    day: text("day").notNull(),
    keyId: text("key_id").notNull(),
    endUser: text("end_user").notNull(),
    adapter: text("adapter").notNull(),
    requests: integer("requests").notNull(),
    hops: integer("hops").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    cachedInputTokens: integer("cached_input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
  },
  // Tenant and day first: every read is one tenant over a range of days.
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.keyId, t.endUser, t.adapter] })],
);
