import { asc, eq } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { webhookOutbox } from "../db/conversation-tables.ts";
import type { WebhookEvent, WebhookOutbox } from "../webhooks/flush-webhook-outbox.ts";

/** The conversation object's webhook outbox (its table comes with the conversation's migrations). */
export class DrizzleWebhookOutbox implements WebhookOutbox {
  readonly #db: DrizzleSqliteDODatabase;

  constructor(storage: DurableObjectStorage) {
    this.#db = drizzle(storage);
  }

  add(event: WebhookEvent, now: number): void {
    this.#db
      .insert(webhookOutbox)
      .values({ id: event.id, eventType: event.type, body: event.body, createdAt: now })
      .onConflictDoNothing()
      .run();
  }

  list(): WebhookEvent[] {
    return this.#db
      .select()
      .from(webhookOutbox)
      .orderBy(asc(webhookOutbox.createdAt))
      .all()
      .map((row) => ({ id: row.id, type: row.eventType, body: row.body }));
  }

  remove(id: string): void {
    this.#db.delete(webhookOutbox).where(eq(webhookOutbox.id, id)).run();
  }
}
