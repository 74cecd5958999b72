import { and, asc, desc, eq, gt, inArray, lt, max, sql, type SQL } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import {
  conversationMeta,
  idempotencyKeys,
  timelineEvents,
  viewSnapshot,
} from "../db/conversation-tables.ts";
import migrations from "../db/migrations/conversation/migrations.js";
import type { StoredTimelineEvent, TimelineEvent } from "../db/timeline-event.ts";
import type { ConversationMeta, ConversationStore } from "../conversation/conversation-store.ts";

const SNAPSHOT_ROW = 1;

type ListOptions = Parameters<ConversationStore["listEvents"]>[0];

/**
 * The conversation store on Durable Object SQLite. Tables are created on the first write only: reading an id that
 * was never created (a guess, a deleted conversation) must leave no storage behind.
 *
 * Built for a turn's hot path, where this object's CPU is most of the edge's overhead (a CPU profile of workerd
 * under `bench:edge` put drizzle's query building at a fifth of it): the queries a turn runs are built once
 * (drizzle prepared queries, placeholders bound per call), and what only this object writes is kept in memory
 * (the meta row, the last sequence number), since a Durable Object is the single writer of its storage.
 */
export class DrizzleConversationStore implements ConversationStore {
  readonly #storage: DurableObjectStorage;
  readonly #db: DrizzleSqliteDODatabase;
  readonly #now: () => number;
  readonly #queries: ReturnType<typeof prepareTimelineQueries>;
  /** Listing queries by their shape (types, order, cursor); a handful of shapes exist. */
  readonly #listQueries = new Map<string, ReturnType<typeof prepareListQuery>>();
  #migrated = false;
  /** The meta row once read or written; undefined until then. */
  #meta: ConversationMeta | undefined;
  #lastSeq: number | undefined;

  constructor(storage: DurableObjectStorage, now: () => number) {
    this.#storage = storage;
    this.#db = drizzle(storage);
    this.#now = now;
    this.#queries = prepareTimelineQueries(this.#db);
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
    if (this.#meta || !this.exists) return this.#meta;
    this.#meta = this.#db.select().from(conversationMeta).get();
    return this.#meta;
  }

  createMeta(meta: Parameters<ConversationStore["createMeta"]>[0]): void {
    this.#db.insert(conversationMeta).values(meta).run();
    this.#meta = { ...meta };
  }

  updateMetadata(metadata: Record<string, string>): void {
    this.#db.update(conversationMeta).set({ metadata }).run();
    if (this.#meta) this.#meta = { ...this.#meta, metadata };
  }

  append(events: readonly TimelineEvent[]): StoredTimelineEvent[] {
    const first = this.lastSeq() + 1;
    const createdAt = this.#now();
    const stored = this.#storage.transactionSync(() =>
      events.map((event, i) => {
        const seq = first + i;
        this.#queries.insertEvent.run({
          seq,
          turnId: event.turnId,
          type: event.type,
          data: event,
          createdAt,
        });
        return { ...event, seq, createdAt };
      }),
    );
    // Only once the transaction committed: a failed append leaves the sequence where storage has it.
    this.#lastSeq = first + events.length - 1;
    return stored;
  }

  readTurn(turnId: string): StoredTimelineEvent[] {
    if (!this.exists) return [];
    return this.#queries.readTurn.all({ turnId }).map(toStored);
  }

  readEventsAfter(afterSeq: number, limit: number): StoredTimelineEvent[] {
    // The common call: a timeline catching up that is already current, answered without a query.
    if (!this.exists || afterSeq >= this.lastSeq()) return [];
    return this.#queries.readEventsAfter.all({ afterSeq, limit }).map(toStored);
  }

  listEvents(options: ListOptions): StoredTimelineEvent[] {
    if (!this.exists) return [];
    const shape = `${options.types.join(",")}|${options.order}|${options.afterSeq === undefined ? "" : "after"}`;
    let query = this.#listQueries.get(shape);
    if (!query) {
      query = prepareListQuery(this.#db, options);
      this.#listQueries.set(shape, query);
    }
    return query.all({ afterSeq: options.afterSeq ?? 0, limit: options.limit }).map(toStored);
  }

  lastSeq(): number {
    if (!this.exists) return 0;
    this.#lastSeq ??= this.#queries.lastSeq.get()?.value ?? 0;
    return this.#lastSeq;
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
    this.#meta = undefined;
    this.#lastSeq = undefined;
  }
}

/** Built once per object: preparing only builds the SQL (no statement runs), so the tables need not exist yet. */
function prepareTimelineQueries(db: DrizzleSqliteDODatabase) {
  const t = timelineEvents;
  return {
    insertEvent: db
      .insert(t)
      .values({
        seq: sql.placeholder("seq"),
        turnId: sql.placeholder("turnId"),
        type: sql.placeholder("type"),
        data: sql.placeholder("data"),
        createdAt: sql.placeholder("createdAt"),
      })
      .prepare(),
    readTurn: db
      .select()
      .from(t)
      .where(eq(t.turnId, sql.placeholder("turnId")))
      .orderBy(asc(t.seq))
      .prepare(),
    readEventsAfter: db
      .select()
      .from(t)
      .where(gt(t.seq, sql.placeholder("afterSeq")))
      .orderBy(asc(t.seq))
      .limit(sql.placeholder("limit"))
      .prepare(),
    lastSeq: db
      .select({ value: max(t.seq) })
      .from(t)
      .prepare(),
  };
}

function prepareListQuery(db: DrizzleSqliteDODatabase, options: ListOptions) {
  const t = timelineEvents;
  const afterSeq = sql.placeholder("afterSeq");
  const cursor: SQL | undefined =
    options.afterSeq === undefined
      ? undefined
      : options.order === "asc"
        ? gt(t.seq, afterSeq)
        : lt(t.seq, afterSeq);
  return db
    .select()
    .from(t)
    .where(and(byType(options.types), cursor))
    .orderBy(options.order === "asc" ? asc(t.seq) : desc(t.seq))
    .limit(sql.placeholder("limit"))
    .prepare();
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
