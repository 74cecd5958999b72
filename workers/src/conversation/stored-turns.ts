import type { StoredTimelineEvent } from "../db/timeline-event.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import type { StoredItem, StoredTurn } from "./conversation-rpc.ts";
import type { ConversationStore } from "./conversation-store.ts";
import {
  buildContextItemId,
  parseContextItemId,
  parseFunctionCallItemId,
  parseFunctionCallOutputItemId,
  parseItemId,
} from "./item-id.ts";

/** More tombstones than this in one conversation are not looked at (a bound, not a expected size). */
const MAX_TOMBSTONES = 10_000;

/**
 * Reading turns and items back for the API, and the tombstones that hide them. A tombstone is an event like any
 * other: the timeline stays append-only, the views ignore it (see the reducer), and only what the API shows changes.
 */
export function readTombstones(store: ConversationStore): { responses: Set<string>; items: Set<string> } {
  const responses = new Set<string>();
  const items = new Set<string>();
  const events = store.listEvents({
    types: ["response_deleted", "item_deleted"],
    order: "asc",
    limit: MAX_TOMBSTONES,
  });
  for (const event of events) {
    if (event.type === "response_deleted") responses.add(event.turnId);
    if (event.type === "item_deleted") items.add(event.itemId);
  }
  return { responses, items };
}

export function readStoredTurn(
  store: ConversationStore,
  conversationId: string,
  turnId: string,
): StoredTurn | null {
  const events = store.readTurn(turnId);
  if (!events.some((event) => event.type === "user_message")) return null;
  let instructions: string | undefined;
  let context: StoredTurn["context"] = [];
  for (const event of events) {
    if (event.type === "instructions") instructions = event.text;
    if (event.type === "context_messages") context = event.messages;
  }
  return {
    turn: buildTurnRecord(conversationId, events),
    deleted: readTombstones(store).responses.has(turnId),
    context,
    ...(instructions === undefined ? {} : { instructions }),
  };
}

/** The latest turn's id (the one `previous_response_id` continues without a fork). */
export function readLatestTurnId(store: ConversationStore): string | undefined {
  return store.listEvents({ types: ["user_message"], order: "desc", limit: 1 })[0]?.turnId;
}

/**
 * The timeline up to the end of `turnId` (its summary included): what a fork from that response starts with. The
 * summary may land after the next turn began (it runs off that turn's critical path): later turns' events in
 * between are left out, so the fork's latest turn is `turnId`.
 */
export function exportThrough(store: ConversationStore, turnId: string): StoredTimelineEvent[] | null {
  const events = store.readTurn(turnId);
  const lastSeq = events.at(-1)?.seq;
  const userSeq = events.find((event) => event.type === "user_message")?.seq;
  if (lastSeq === undefined || userSeq === undefined || readTombstones(store).responses.has(turnId))
    return null;
  const known = new Set<string>();
  const out: StoredTimelineEvent[] = [];
  for (let after = 0; after < lastSeq;) {
    const page = store.readEventsAfter(after, 500).filter((event) => event.seq <= lastSeq);
    if (page.length === 0) break;
    for (const event of page) {
      if (event.seq <= userSeq) known.add(event.turnId);
      if (event.seq <= userSeq || known.has(event.turnId)) out.push(event);
    }
    after = page.at(-1)?.seq ?? lastSeq;
  }
  return out;
}

export function deleteResponse(store: ConversationStore, turnId: string): boolean {
  if (!store.readTurn(turnId).some((event) => event.type === "user_message")) return false;
  if (readTombstones(store).responses.has(turnId)) return false;
  store.append([{ type: "response_deleted", turnId }]);
  return true;
}

/** The event an item id names (its user message, answer or context event), if there is one. */
export function findItemEvent(store: ConversationStore, itemId: string): StoredTimelineEvent | undefined {
  const context = parseContextItemId(itemId);
  if (context) {
    const event = store.readTurn(context.turnId).find((e) => e.type === "context_messages");
    return event?.type === "context_messages" && context.index < event.messages.length ? event : undefined;
  }
  const result = parseFunctionCallOutputItemId(itemId);
  if (result) {
    const user = store.readTurn(result.turnId).find((e) => e.type === "user_message");
    return user?.type === "user_message" && result.index < (user.toolResults?.length ?? 0) ? user : undefined;
  }
  // A call item (an `item_reference` clients send back for a `function_call`) is its answer's.
  const call = parseFunctionCallItemId(itemId);
  if (call) {
    const answer = store.readTurn(call.turnId).find((e) => e.type === "answer");
    return answer?.type === "answer" && call.index < (answer.toolCalls?.length ?? 0) ? answer : undefined;
  }
  const parsed = parseItemId(itemId);
  const type = parsed?.role === "user" ? "user_message" : "answer";
  return parsed ? store.readTurn(parsed.turnId).find((e) => e.type === type) : undefined;
}

/** An item (see list-items.ts) that exists and is not deleted. */
export function readItem(
  store: ConversationStore,
  conversationId: string,
  itemId: string,
): StoredItem | null {
  const event = findItemEvent(store, itemId);
  if (!event || readTombstones(store).items.has(itemId)) return null;
  if (event.type === "context_messages") {
    const message = event.messages[parseContextItemId(itemId)?.index ?? -1];
    return message ? { role: message.role, context: { id: itemId, ...message } } : null;
  }
  const turn = buildTurnRecord(conversationId, store.readTurn(event.turnId));
  const call = parseFunctionCallItemId(itemId);
  if (call) return { role: "assistant", turn, callIndex: call.index };
  const result = parseFunctionCallOutputItemId(itemId);
  if (result) return { role: "user", turn, resultIndex: result.index };
  return { role: event.type === "user_message" ? "user" : "assistant", turn };
}

export function deleteItem(store: ConversationStore, conversationId: string, itemId: string): boolean {
  const event = readItem(store, conversationId, itemId) ? findItemEvent(store, itemId) : undefined;
  if (!event) return false;
  store.append([{ type: "item_deleted", turnId: event.turnId, itemId }]);
  return true;
}

/**
 * Messages added without a turn (`POST /v1/conversations/{id}/items`): one `context_messages` event under a turn
 * id of its own, which the next turn's views open with.
 */
export function addItems(
  store: ConversationStore,
  turnId: string,
  messages: Array<{ role: "user" | "assistant"; text: string }>,
): StoredItem[] {
  store.append([{ type: "context_messages", turnId, messages }]);
  return messages.map((message, index) => {
    const id = buildContextItemId(turnId, index);
    return { role: message.role, context: { id, ...message } };
  });
}
