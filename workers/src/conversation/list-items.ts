import type { StoredTimelineEvent } from "../db/timeline-event.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import type { ConversationStore } from "./conversation-store.ts";
import type { ItemPage, StoredItem } from "./conversation-rpc.ts";
import { buildContextItemId, buildFunctionCallItemId, buildFunctionCallOutputItemId } from "./item-id.ts";
import { findItemEvent, readTombstones } from "./stored-turns.ts";

const ITEM_EVENTS = ["user_message", "answer", "context_messages"] as const;

/**
 * Conversation items in timeline order, paginated by item id; deleted ones skipped. Items are turns' user
 * messages and answers (or, as OpenAI lists them, their tool results and calls), and the earlier messages that
 * came with a turn or were added on their own.
 */
export function listItems(
  store: ConversationStore,
  conversationId: string,
  query: { after?: string | undefined; limit: number; order: "asc" | "desc" },
): ItemPage | { error: "unknown_after" } {
  let afterSeq: number | undefined;
  if (query.after !== undefined) {
    const anchor = findItemEvent(store, query.after);
    if (!anchor) return { error: "unknown_after" };
    // The anchor's own event is read again: a context event holds items on both sides of the cursor.
    afterSeq = query.order === "asc" ? anchor.seq - 1 : anchor.seq + 1;
  }
  const deleted = readTombstones(store).items;
  const events = store.listEvents({
    types: ITEM_EVENTS,
    order: query.order,
    limit: query.limit + 2 + deleted.size,
    ...(afterSeq === undefined ? {} : { afterSeq }),
  });
  let items = events.flatMap((event) => expandItems(store, conversationId, event, query.order));
  if (query.after !== undefined) items = items.slice(items.findIndex((item) => item.id === query.after) + 1);
  const kept = items.filter((item) => !deleted.has(item.id));
  return { hasMore: kept.length > query.limit, items: kept.slice(0, query.limit).map(({ item }) => item) };
}

function expandItems(
  store: ConversationStore,
  conversationId: string,
  event: StoredTimelineEvent,
  order: "asc" | "desc",
): Array<{ id: string; item: StoredItem }> {
  const items = readEventItems(store, conversationId, event);
  return order === "asc" ? items : items.reverse();
}

/**
 * The items one event holds, oldest first: each message of a context event; a turn's user message, or the
 * `function_call_output` items its input was; its answer, or the `function_call` items the answer made.
 */
export function readEventItems(
  store: ConversationStore,
  conversationId: string,
  event: StoredTimelineEvent,
): Array<{ id: string; item: StoredItem }> {
  if (event.type === "context_messages") {
    return event.messages.map((message, index) => {
      const id = buildContextItemId(event.turnId, index);
      return { id, item: { role: message.role, context: { id, ...message } } };
    });
  }
  const turn = buildTurnRecord(conversationId, store.readTurn(event.turnId));
  if (event.type === "user_message") {
    if (!turn.toolResults) return [{ id: turn.userItemId, item: { role: "user", turn } }];
    return turn.toolResults.map((_, resultIndex) => ({
      id: buildFunctionCallOutputItemId(turn.turnId, resultIndex),
      item: { role: "user", turn, resultIndex },
    }));
  }
  if (!turn.toolCalls) return [{ id: turn.assistantItemId, item: { role: "assistant", turn } }];
  return turn.toolCalls.map((_, callIndex) => ({
    id: buildFunctionCallItemId(turn.turnId, callIndex),
    item: { role: "assistant", turn, callIndex },
  }));
}
