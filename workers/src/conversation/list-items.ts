import { buildTurnRecord } from "./build-turn-record.ts";
import type { ConversationStore } from "./conversation-store.ts";
import type { ItemPage } from "./conversation-rpc.ts";
import { buildItemId, parseItemId } from "./item-id.ts";
import { readTombstones } from "./stored-turns.ts";

/** Conversation items (user messages and answers) in timeline order, paginated by item id; deleted ones skipped. */
export function listItems(
  store: ConversationStore,
  conversationId: string,
  query: { after?: string; limit: number; order: "asc" | "desc" },
): ItemPage | { error: "unknown_after" } {
  let afterSeq: number | undefined;
  if (query.after !== undefined) {
    const parsed = parseItemId(query.after);
    const type = parsed?.role === "user" ? "user_message" : "answer";
    const anchor = parsed ? store.readTurn(parsed.turnId).find((e) => e.type === type) : undefined;
    if (!anchor) return { error: "unknown_after" };
    afterSeq = anchor.seq;
  }
  const deleted = readTombstones(store).items;
  const events = store
    .listEvents({
      types: ["user_message", "answer"],
      order: query.order,
      limit: query.limit + 1 + deleted.size,
      ...(afterSeq === undefined ? {} : { afterSeq }),
    })
    .filter((e) => !deleted.has(buildItemId(e.turnId, e.type === "user_message" ? "user" : "assistant")));
  const page = events.slice(0, query.limit);
  return {
    hasMore: events.length > query.limit,
    items: page.map((event) => ({
      role: event.type === "user_message" ? "user" : "assistant",
      turn: buildTurnRecord(conversationId, store.readTurn(event.turnId)),
    })),
  };
}
