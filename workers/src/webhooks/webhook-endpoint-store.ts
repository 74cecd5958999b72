import type { InboundConfig, WebhookEventType } from "../db/webhook-tables.ts";
import type { AuditDraft, Page } from "../tenancy/tenant-store.ts";

export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  url: string;
  description: string;
  events: WebhookEventType[];
  status: "enabled" | "disabled";
  disabledReason: string | null;
  secret: string;
  previousSecret: string | null;
  /** Unix seconds. */
  previousSecretExpiresAt: number | null;
  inbound: InboundConfig | null;
  createdAt: number;
  updatedAt: number;
}

export type WebhookEndpointPatch = Partial<
  Pick<WebhookEndpoint, "url" | "description" | "events" | "status" | "disabledReason" | "inbound">
>;

/** Webhook endpoints and the inbound dedupe record. A capability type; D1 implements it in production. */
export interface WebhookEndpointStore {
  create(endpoint: WebhookEndpoint, audit: AuditDraft): Promise<void>;
  /** Any tenant's endpoint: for the delivery object and for inbound hooks, which carry no API key. */
  getById(id: string): Promise<WebhookEndpoint | undefined>;
  list(
    tenantId: string,
    query: { after?: string | undefined; limit: number; order: "asc" | "desc" },
  ): Promise<Page<WebhookEndpoint> | { error: "unknown_after" }>;
  /** The tenant's enabled endpoints subscribed to `type`. */
  listSubscribed(tenantId: string, type: WebhookEventType): Promise<WebhookEndpoint[]>;
  /** Undefined when the tenant has no such endpoint. */
  update(
    tenantId: string,
    id: string,
    patch: WebhookEndpointPatch & { updatedAt: number },
    audit?: AuditDraft,
  ): Promise<WebhookEndpoint | undefined>;
  rotateSecret(
    tenantId: string,
    id: string,
    rotation: { secret: string; previousSecretExpiresAt: number; updatedAt: number },
    audit: AuditDraft,
  ): Promise<WebhookEndpoint | undefined>;
  remove(tenantId: string, id: string, audit: AuditDraft): Promise<boolean>;
  /** False when this delivery id was already accepted for the endpoint (a replay). */
  recordInbound(row: {
    endpointId: string;
    deliveryId: string;
    conversationId: string;
    receivedAt: number;
  }): Promise<boolean>;
  /** Undoes {@link recordInbound} when the turn could not start, so the sender's retry is accepted. */
  forgetInbound(endpointId: string, deliveryId: string): Promise<void>;
}

/** The secrets a delivery is signed with now: the current one, plus the previous one during a rotation. */
export function readSigningSecrets(endpoint: WebhookEndpoint, nowSeconds: number): string[] {
  const previousLive =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt > nowSeconds;
  return previousLive && endpoint.previousSecret
    ? [endpoint.secret, endpoint.previousSecret]
    : [endpoint.secret];
}
