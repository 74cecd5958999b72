import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { TimelineEvent } from "./timeline-event.ts";
import type { WebhookEventType } from "./webhook-tables.ts";

/**
 * Tables of one conversation's Durable Object (its own SQLite). The timeline is the only source of truth and is
 * append-only; `view_snapshot` and `idempotency_key` are derived or bookkeeping state.
 */

/** Written once, when the conversation is created. */
export const conversationMeta = sqliteTable("conversation_meta", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  /** Unix seconds. */
  createdAt: integer("created_at").notNull(),
  metadata: text("metadata", { mode: "json" }).$type<Record<string, string>>().notNull(),
});

/** The append-only timeline: `seq` is monotonic with no gaps. */
export const timelineEvents = sqliteTable(
  "timeline_event",
  {
    seq: integer("seq").primaryKey(),
    turnId: text("turn_id").notNull(),
    type: text("type").$type<TimelineEvent["type"]>().notNull(),
    data: text("data", { mode: "json" }).$type<TimelineEvent>().notNull(),
    /** Unix ms; informative only: views never read clocks. */
    createdAt: integer("created_at").notNull(),
  },
  // By type: the turn loop reads the latest event of a few types each turn (the last answer, the tools shown), which
  // without it scans the whole timeline backwards when the type is rare or absent.
  (t) => [index("timeline_event_turn").on(t.turnId, t.seq), index("timeline_event_type").on(t.type, t.seq)],
);

/** The per-adapter views after event `throughSeq`, so a turn does not re-render the whole conversation. */
export const viewSnapshot = sqliteTable("view_snapshot", {
  id: integer("id").primaryKey(),
  throughSeq: integer("through_seq").notNull(),
  harnessHash: text("harness_hash").notNull(),
  state: text("state", { mode: "json" }).$type<unknown>().notNull(),
});

/** Idempotency-Key records of turn-creating requests. */
export const idempotencyKeys = sqliteTable("idempotency_key", {
  key: text("key").primaryKey(),
  /** SHA-256 of the canonical request body: a reused key with another body is a 422. */
  requestHash: text("request_hash").notNull(),
  turnId: text("turn_id").notNull(),
  createdAt: integer("created_at").notNull(),
});

/**
 * Webhook events of this conversation not yet handed to the endpoints' delivery objects. Written in the same
 * object as the timeline, and flushed (and retried by an alarm) afterwards: an event is never lost between the
 * turn and its delivery queue.
 */
export const webhookOutbox = sqliteTable("webhook_outbox", {
  /** The message id (`msg_…`), stable across re-flushes. */
  id: text("id").primaryKey(),
  eventType: text("event_type").$type<WebhookEventType>().notNull(),
  body: text("body").notNull(),
  createdAt: integer("created_at").notNull(),
});
