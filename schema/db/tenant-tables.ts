import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Tables of the edge's D1 database: what spans conversations (the per-tenant conversation index today; tenants,
 * API keys and the audit log with the tenancy issue). A conversation's own data lives in its Durable Object.
 */
export const conversationIndex = sqliteTable(
  "conversation_index",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, string>>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index("conversation_index_by_time").on(t.tenantId, t.createdAt, t.id),
  ],
);
