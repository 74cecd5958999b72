import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversationIndex } from "../db/tenant-tables.ts";
import { orderByCreation } from "./order-by-creation.ts";
import type { ConversationIndex } from "../conversation/conversation-index.ts";

/** The conversation index in D1, keyed by (tenant, id) and paged by (created_at, id). */
export function createD1ConversationIndex(database: D1Database): ConversationIndex {
  const db = drizzle(database);
  const t = conversationIndex;
  return {
    async add(meta) {
      await db.insert(t).values(meta).onConflictDoNothing();
    },
    async updateMetadata(meta) {
      await db
        .update(t)
        .set({ metadata: meta.metadata })
        .where(and(eq(t.tenantId, meta.tenantId), eq(t.id, meta.id)));
    },
    async remove(tenantId, conversationId) {
      await db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.id, conversationId)));
    },
    async list(tenantId, query) {
      let anchor;
      if (query.after !== undefined) {
        [anchor] = await db
          .select()
          .from(t)
          .where(and(eq(t.tenantId, tenantId), eq(t.id, query.after)));
        if (!anchor) return { error: "unknown_after" };
      }
      const page = orderByCreation(t, query.order, anchor);
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), page.after))
        .orderBy(...page.orderBy)
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },
  };
}
