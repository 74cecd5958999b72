import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

import type { WebhookEventType } from "../../../schema/api/webhook-events.ts";

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../../../schema/api/webhook-events.ts";

export const INBOUND_SCHEMES = ["standard", "github", "slack"] as const;
export type InboundScheme = (typeof INBOUND_SCHEMES)[number];

/** How `POST /v1/hooks/{endpoint_id}` verifies and reads a third party's webhook. */
export interface InboundConfig {
  scheme: InboundScheme;
  /** The sender's signing secret (`whsec_…` for Standard Webhooks, the raw shared secret for GitHub and Slack). */
  secret: string;
  /** JSON pointer (RFC 6901) to the value that names the conversation, e.g. `/event/thread_ts`. */
  threadKey: string;
  /** JSON pointer to the message text. */
  textKey: string;
}

/**
 * D1: a tenant's webhook endpoints. Signing secrets are stored as they are (HMAC needs them in the clear); a
 * production deployment wraps this column with a key-encryption key — see docs/operations.md, "Webhooks".
 */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    /** `we_…`. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    url: text("url").notNull(),
    description: text("description").notNull().default(""),
    events: text("events", { mode: "json" }).$type<WebhookEventType[]>().notNull(),
    status: text("status", { enum: ["enabled", "disabled"] })
      .notNull()
      .default("enabled"),
    /** Why it is disabled (`gone` after a 410, `manual`). */
    disabledReason: text("disabled_reason"),
    secret: text("secret").notNull(),
    /** Still signed with until `previousSecretExpiresAt` (unix seconds), so receivers can roll over. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    inbound: text("inbound", { mode: "json" }).$type<InboundConfig>(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("webhook_endpoints_by_tenant").on(t.tenantId, t.createdAt, t.id)],
);

/** D1: inbound deliveries already accepted, so a replayed delivery id is refused. */
export const inboundDeliveries = sqliteTable(
  "inbound_deliveries",
  {
    endpointId: text("endpoint_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    conversationId: text("conversation_id").notNull(),
    /** Unix seconds. */
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.deliveryId] })],
);
