import { and, asc, desc, eq, gt, lt, or } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversationIndex } from "../../../schema/db/tenant-tables.ts";
import type { ConversationIndex } from "../conversation/conversation-index.ts";

/** The conversation index in D1, keyed by (tenant, id) and paged by (created_at, id). */
export function createD1ConversationIndex(database: D1Database): ConversationIndex {
  const db = drizzle(database);
  const t = conversationIndex;
  return {
    async add(meta) {
      await db.insert(t).values(meta).onConflictDoNothing();
    },
    async remove(tenantId, conversationId) {
      await db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.id, conversationId)));
    },
    async list(tenantId, query) {
      let cursor;
      if (query.after !== undefined) {
        const [anchor] = await db
          .select()
          .from(t)
          .where(and(eq(t.tenantId, tenantId), eq(t.id, query.after)));
        if (!anchor) return { error: "unknown_after" };
        const beyond = query.order === "asc" ? gt : lt;
        cursor = or(
          beyond(t.createdAt, anchor.createdAt),
          and(eq(t.createdAt, anchor.createdAt), beyond(t.id, anchor.id)),
        );
      }
      const order = query.order === "asc" ? asc : desc;
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), cursor))
        .orderBy(order(t.createdAt), order(t.id))
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },
  };
}
