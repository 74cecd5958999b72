import type { StoredTimelineEvent, TimelineEvent } from "../db/timeline-event.ts";

export interface ConversationMeta {
  id: string;
  tenantId: string;
  /** Unix seconds. */
  createdAt: number;
  metadata: Record<string, string>;
}

export interface ViewSnapshot {
  throughSeq: number;
  harnessHash: string;
  state: unknown;
}

export interface IdempotencyRecord {
  key: string;
  requestHash: string;
  turnId: string;
}

/**
 * What the conversation logic needs from storage: a capability type, implemented per runtime (Durable Object
 * SQLite through drizzle in production, in memory in unit tests). Every method is synchronous because Durable
 * Object SQLite is, which also keeps each call atomic with respect to other requests.
 */
export interface ConversationStore {
  readMeta(): ConversationMeta | undefined;
  createMeta(meta: ConversationMeta): void;
  updateMetadata(metadata: Record<string, string>): void;
  /** Appends events atomically, in order; returns them with their sequence numbers. */
  append(events: readonly TimelineEvent[]): StoredTimelineEvent[];
  readTurn(turnId: string): StoredTimelineEvent[];
  /** Events after `afterSeq` (exclusive), ascending. */
  readEventsAfter(afterSeq: number, limit: number): StoredTimelineEvent[];
  /** Events of one type, paginated by sequence. */
  listEvents(options: {
    types: readonly TimelineEvent["type"][];
    order: "asc" | "desc";
    afterSeq?: number;
    limit: number;
  }): StoredTimelineEvent[];
  lastSeq(): number;
  readViewSnapshot(): ViewSnapshot | undefined;
  writeViewSnapshot(snapshot: ViewSnapshot): void;
  readIdempotency(key: string): IdempotencyRecord | undefined;
  /** Replaces an earlier record of the same key (a retry after a dropped stream runs anew). */
  writeIdempotency(record: IdempotencyRecord): void;
  /** Removes the whole conversation. */
  deleteAll(): Promise<void>;
}
