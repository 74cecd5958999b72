/**
 * What a tenant key may do: `conversations` (/v1/conversations…), `responses` (/v1/responses), `chat`
 * (/v1/chat/completions), `admin` (the tenant's own audit log) and `webhooks` (/v1/webhook_endpoints…: it decides
 * where conversation data is sent, so it is granted only when asked for). `GET /v1/models` needs only a valid key.
 */
export const API_KEY_SCOPES = ["conversations", "responses", "chat", "admin", "webhooks"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** A new key can serve traffic but not read the audit log unless asked for. */
export const DEFAULT_API_KEY_SCOPES: readonly ApiKeyScope[] = ["conversations", "responses", "chat"];

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value);
}

/** Who a request acts for: the tenant, the key it presented and what that key may do. */
export interface Principal {
  tenantId: string;
  keyId: string;
  scopes: readonly ApiKeyScope[];
}
