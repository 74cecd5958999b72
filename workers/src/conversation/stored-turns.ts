import type { StoredTimelineEvent } from "../../../schema/db/timeline-event.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import type { StoredItem, StoredTurn } from "./conversation-rpc.ts";
import type { ConversationStore } from "./conversation-store.ts";
import { parseItemId } from "./item-id.ts";

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

/** The timeline up to the end of `turnId` (its summary included): what a fork from that response starts with. */
export function exportThrough(store: ConversationStore, turnId: string): StoredTimelineEvent[] | null {
  const events = store.readTurn(turnId);
  const lastSeq = events.at(-1)?.seq;
  if (lastSeq === undefined || readTombstones(store).responses.has(turnId)) return null;
  const out: StoredTimelineEvent[] = [];
  for (let after = 0; after < lastSeq;) {
    const page = store.readEventsAfter(after, 500).filter((event) => event.seq <= lastSeq);
    if (page.length === 0) break;
    out.push(...page);
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

/** A user message or answer that exists and is not deleted. */
export function readItem(
  store: ConversationStore,
  conversationId: string,
  itemId: string,
): StoredItem | null {
  const parsed = parseItemId(itemId);
  if (!parsed) return null;
  const events = store.readTurn(parsed.turnId);
  const type = parsed.role === "user" ? "user_message" : "answer";
  if (!events.some((event) => event.type === type)) return null;
  if (readTombstones(store).items.has(itemId)) return null;
  return { role: parsed.role, turn: buildTurnRecord(conversationId, events) };
}

export function deleteItem(store: ConversationStore, conversationId: string, itemId: string): boolean {
  const item = readItem(store, conversationId, itemId);
  if (!item) return false;
  store.append([{ type: "item_deleted", turnId: item.turn.turnId, itemId }]);
  return true;
}
