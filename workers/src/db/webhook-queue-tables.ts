import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Tables of one webhook endpoint's delivery Durable Object (its own SQLite): the messages to deliver and the log of
 * every attempt. A message keeps its id — the `webhook-id` receivers dedupe on — across all its attempts.
 */
export const webhookMessages = sqliteTable(
  "webhook_message",
  {
    /** `msg_…`, derived from the event, so a re-sent event is the same message. */
    id: text("id").primaryKey(),
    eventType: text("event_type").notNull(),
    /** The exact body every attempt sends: `{type, timestamp, data}`. */
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "dead"] }).notNull(),
    /** Attempts since the message was (re)queued: the position in the retry schedule. */
    attempts: integer("attempts").notNull().default(0),
    /** Unix ms; null once delivered or dead. */
    nextAttemptAt: integer("next_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    /** Unix ms. */
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("webhook_message_due").on(t.status, t.nextAttemptAt),
    index("webhook_message_by_time").on(t.createdAt, t.id),
  ],
);

/** Append-only: one row per HTTP attempt, what the endpoint's delivery log shows. */
export const webhookAttempts = sqliteTable(
  "webhook_attempt",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    messageId: text("message_id").notNull(),
    /** Unix ms when the attempt started. */
    startedAt: integer("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    /** `network_error`, `timeout`, or null for an HTTP answer. */
    error: text("error"),
    /** What followed the attempt. */
    outcome: text("outcome").$type<"delivered" | "retry" | "dead" | "disabled">().notNull(),
  },
  (t) => [index("webhook_attempt_by_message").on(t.messageId, t.seq)],
);
