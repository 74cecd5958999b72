import { and, asc, desc, eq, gt, inArray, lt, max, sql } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import {
  conversationMeta,
  idempotencyKeys,
  timelineEvents,
  viewSnapshot,
} from "../../../schema/db/conversation-tables.ts";
import migrations from "../../../schema/db/migrations/conversation/migrations.js";
import type { StoredTimelineEvent, TimelineEvent } from "../../../schema/db/timeline-event.ts";
import type { ConversationStore } from "../conversation/conversation-store.ts";

const SNAPSHOT_ROW = 1;

/**
 * The conversation store on Durable Object SQLite. Tables are created on the first write only: reading an id that
 * was never created (a guess, a deleted conversation) must leave no storage behind.
 */
export class DrizzleConversationStore implements ConversationStore {
  readonly #storage: DurableObjectStorage;
  readonly #db: DrizzleSqliteDODatabase;
  readonly #now: () => number;
  #migrated = false;

  constructor(storage: DurableObjectStorage, now: () => number) {
    this.#storage = storage;
    this.#db = drizzle(storage);
    this.#now = now;
  }

  /** True once the conversation's tables exist. */
  get exists(): boolean {
    if (this.#migrated) return true;
    const rows = this.#storage.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'conversation_meta'")
      .toArray();
    this.#migrated = rows.length > 0;
    return this.#migrated;
  }

  async migrate(): Promise<void> {
    await migrate(this.#db, migrations);
    this.#migrated = true;
  }

  readMeta() {
    if (!this.exists) return undefined;
    return this.#db.select().from(conversationMeta).get();
  }

  createMeta(meta: Parameters<ConversationStore["createMeta"]>[0]): void {
    this.#db.insert(conversationMeta).values(meta).run();
  }

  updateMetadata(metadata: Record<string, string>): void {
    this.#db.update(conversationMeta).set({ metadata }).run();
  }

  append(events: readonly TimelineEvent[]): StoredTimelineEvent[] {
    return this.#storage.transactionSync(() => {
      let seq = this.lastSeq();
      const createdAt = this.#now();
      return events.map((event) => {
        seq += 1;
        this.#db
          .insert(timelineEvents)
          .values({ seq, turnId: event.turnId, type: event.type, data: event, createdAt })
          .run();
        return { ...event, seq, createdAt };
      });
    });
  }

  readTurn(turnId: string): StoredTimelineEvent[] {
    if (!this.exists) return [];
    return this.#db
      .select()
      .from(timelineEvents)
      .where(eq(timelineEvents.turnId, turnId))
      .orderBy(asc(timelineEvents.seq))
      .all()
      .map(toStored);
  }

  readEventsAfter(afterSeq: number, limit: number): StoredTimelineEvent[] {
    if (!this.exists) return [];
    return this.#db
      .select()
      .from(timelineEvents)
      .where(gt(timelineEvents.seq, afterSeq))
      .orderBy(asc(timelineEvents.seq))
      .limit(limit)
      .all()
      .map(toStored);
  }

  listEvents(options: Parameters<ConversationStore["listEvents"]>[0]): StoredTimelineEvent[] {
    if (!this.exists) return [];
    const { types, order, afterSeq, limit } = options;
    const cursor =
      afterSeq === undefined
        ? undefined
        : order === "asc"
          ? gt(timelineEvents.seq, afterSeq)
          : lt(timelineEvents.seq, afterSeq);
    return this.#db
      .select()
      .from(timelineEvents)
      .where(and(byType(types), cursor))
      .orderBy(order === "asc" ? asc(timelineEvents.seq) : desc(timelineEvents.seq))
      .limit(limit)
      .all()
      .map(toStored);
  }

  lastSeq(): number {
    if (!this.exists) return 0;
    return (
      this.#db
        .select({ value: max(timelineEvents.seq) })
        .from(timelineEvents)
        .get()?.value ?? 0
    );
  }

  readViewSnapshot() {
    if (!this.exists) return undefined;
    return this.#db.select().from(viewSnapshot).where(eq(viewSnapshot.id, SNAPSHOT_ROW)).get();
  }

  writeViewSnapshot(snapshot: Parameters<ConversationStore["writeViewSnapshot"]>[0]): void {
    const row = { id: SNAPSHOT_ROW, ...snapshot };
    this.#db
      .insert(viewSnapshot)
      .values(row)
      .onConflictDoUpdate({ target: viewSnapshot.id, set: snapshot })
      .run();
  }

  readIdempotency(key: string) {
    if (!this.exists) return undefined;
    return this.#db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key)).get();
  }

  writeIdempotency(record: Parameters<ConversationStore["writeIdempotency"]>[0]): void {
    this.#db
      .insert(idempotencyKeys)
      .values({ ...record, createdAt: this.#now() })
      .onConflictDoUpdate({
        target: idempotencyKeys.key,
        set: { requestHash: record.requestHash, turnId: record.turnId, createdAt: this.#now() },
      })
      .run();
  }

  async deleteAll(): Promise<void> {
    await this.#storage.deleteAll();
    this.#migrated = false;
  }
}

/**
 * One type goes through the (type, seq) index: the latest event of a rare type is one seek, not a scan of the
 * timeline. Several types walk seq instead (the unary `+` keeps SQLite off the index): an index per type would
 * have SQLite gather and sort every event of those types to find the latest few.
 */
function byType(types: readonly TimelineEvent["type"][]) {
  const [only] = types;
  return types.length === 1 && only !== undefined
    ? eq(timelineEvents.type, only)
    : inArray(sql`+${timelineEvents.type}`, [...types]);
}

function toStored(row: typeof timelineEvents.$inferSelect): StoredTimelineEvent {
  return { ...row.data, seq: row.seq, createdAt: row.createdAt };
}
