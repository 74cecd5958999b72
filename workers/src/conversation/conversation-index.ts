import type { ConversationMeta } from "./conversation-store.ts";

/**
 * The per-tenant list of conversations (a conversation's own data lives in its object; this is only the index
 * that lets a tenant enumerate them). A capability type; D1 implements it in production.
 */
export interface ConversationIndex {
  add(meta: ConversationMeta): Promise<void>;
  remove(tenantId: string, conversationId: string): Promise<void>;
  /** Keeps a listed conversation's metadata in step with its object's (absent: the index holds none). */
  updateMetadata?(meta: ConversationMeta): Promise<void>;
  /** Newest first by default; `after` is a conversation id from a previous page. */
  list(
    tenantId: string,
    query: { after?: string | undefined; limit: number; order: "asc" | "desc" },
  ): Promise<{ data: ConversationMeta[]; hasMore: boolean } | { error: "unknown_after" }>;
}
