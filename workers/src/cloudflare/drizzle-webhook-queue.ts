import { and, asc, eq, gt, lte, min, or } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import { webhookAttempts, webhookMessages } from "../db/webhook-queue-tables.ts";
import migrations from "../db/migrations/webhook/migrations.js";
import type { WebhookAttempt, WebhookMessage, WebhookQueue } from "../webhooks/webhook-queue.ts";

const m = webhookMessages;

/** One endpoint's queue and delivery log on its Durable Object's SQLite. */
export class DrizzleWebhookQueue implements WebhookQueue {
  readonly #storage: DurableObjectStorage;
  readonly #db: DrizzleSqliteDODatabase;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#db = drizzle(storage);
  }

  async migrate(): Promise<void> {
    await migrate(this.#db, migrations);
  }

  enqueue(message: { id: string; eventType: string; body: string; now: number }): boolean {
    const inserted = this.#db
      .insert(m)
      .values({
        id: message.id,
        eventType: message.eventType,
        body: message.body,
        status: "pending",
        attempts: 0,
        nextAttemptAt: message.now,
        createdAt: message.now,
        updatedAt: message.now,
      })
      .onConflictDoNothing()
      .returning({ id: m.id })
      .all();
    return inserted.length > 0;
  }

  listDue(now: number, limit: number): WebhookMessage[] {
    return this.#db
      .select()
      .from(m)
      .where(and(eq(m.status, "pending"), lte(m.nextAttemptAt, now)))
      .orderBy(asc(m.nextAttemptAt), asc(m.createdAt))
      .limit(limit)
      .all();
  }

  nextDueAt(): number | undefined {
    const row = this.#db
      .select({ at: min(m.nextAttemptAt) })
      .from(m)
      .where(eq(m.status, "pending"))
      .get();
    return row?.at ?? undefined;
  }

  recordAttempt(
    attempt: WebhookAttempt,
    next: Pick<WebhookMessage, "status" | "attempts" | "nextAttemptAt">,
  ): void {
    this.#storage.transactionSync(() => {
      this.#db.insert(webhookAttempts).values(attempt).run();
      this.#db
        .update(m)
        .set({
          ...next,
          lastStatusCode: attempt.statusCode,
          lastError: attempt.error,
          updatedAt: attempt.startedAt + attempt.durationMs,
        })
        .where(eq(m.id, attempt.messageId))
        .run();
    });
  }

  killPending(reason: string, now: number): number {
    const killed = this.#db
      .update(m)
      .set({ status: "dead", nextAttemptAt: null, lastError: reason, updatedAt: now })
      .where(eq(m.status, "pending"))
      .returning({ id: m.id })
      .all();
    return killed.length;
  }

  get(id: string): WebhookMessage | undefined {
    return this.#db.select().from(m).where(eq(m.id, id)).get();
  }

  listAttempts(id: string): WebhookAttempt[] {
    return this.#db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.messageId, id))
      .orderBy(asc(webhookAttempts.seq))
      .all()
      .map(({ seq: _seq, ...attempt }) => attempt);
  }

  list(query: { after?: string | undefined; limit: number; status?: WebhookMessage["status"] | undefined }) {
    const anchor = query.after === undefined ? undefined : this.get(query.after);
    const rows = this.#db
      .select()
      .from(m)
      .where(
        and(
          query.status ? eq(m.status, query.status) : undefined,
          anchor
            ? or(
                gt(m.createdAt, anchor.createdAt),
                and(eq(m.createdAt, anchor.createdAt), gt(m.id, anchor.id)),
              )
            : undefined,
        ),
      )
      .orderBy(asc(m.createdAt), asc(m.id))
      .limit(query.limit + 1)
      .all();
    return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  requeue(id: string, now: number): WebhookMessage | undefined {
    this.#db
      .update(m)
      .set({ status: "pending", attempts: 0, nextAttemptAt: now, updatedAt: now })
      .where(eq(m.id, id))
      .run();
    return this.get(id);
  }
}
