import type { WebhookEventType } from "../../db/webhook-tables.ts";
import type { WebhookEndpoint } from "../../webhooks/webhook-endpoint-store.ts";

export interface WebhookEndpointObject {
  id: string;
  object: "webhook_endpoint";
  url: string;
  description: string;
  events: WebhookEventType[];
  status: "enabled" | "disabled";
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
  /** When deliveries are also signed with the previous secret until. */
  previous_secret_expires_at: number | null;
  inbound: { scheme: string; thread_key: string; text_key: string; url: string } | null;
  /** Only in the answers that create or rotate it. */
  secret?: string;
  /** Only when created with a generated Standard Webhooks inbound secret. */
  inbound_secret?: string;
}

/** Never the stored secrets: pass them only when answering the request that made them. */
export function formatWebhookEndpoint(
  endpoint: WebhookEndpoint,
  shown: { secret?: string; inboundSecret?: string } = {},
): WebhookEndpointObject {
  const { inbound } = endpoint;
  return {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
    previous_secret_expires_at: endpoint.previousSecret ? endpoint.previousSecretExpiresAt : null,
    inbound: inbound
      ? {
          scheme: inbound.scheme,
          thread_key: inbound.threadKey,
          text_key: inbound.textKey,
          url: `/v1/hooks/${endpoint.id}`,
        }
      : null,
    ...(shown.secret === undefined ? {} : { secret: shown.secret }),
    ...(shown.inboundSecret === undefined ? {} : { inbound_secret: shown.inboundSecret }),
  };
}
