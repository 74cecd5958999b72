import type { Context } from "hono";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import type { ConversationHandle } from "../../core/conversation-core.ts";
import type { ConversationMeta } from "../../conversation/conversation-store.ts";
import type { AppEnv } from "../app-deps.ts";

const CONVERSATION_ID = /^conv_[0-9a-f]{32}$/;

/** Ids that cannot be ours are 404 without touching storage: a guess never even wakes an object. */
export function isConversationId(id: string): boolean {
  return CONVERSATION_ID.test(id);
}

/** The tenant's conversation named in the path, or a 404 (the same for another tenant's id as for none). */
export async function requireConversation(
  c: Context<AppEnv>,
  id = c.req.param("id") ?? "",
): Promise<{ id: string; handle: ConversationHandle; meta: ConversationMeta }> {
  if (!isConversationId(id)) throw createNotFoundError("conversation", id);
  const handle = c.var.deps.conversations(c.var.tenantId, id);
  const meta = await handle.describe();
  if (!meta) throw createNotFoundError("conversation", id);
  return { id, handle, meta };
}
