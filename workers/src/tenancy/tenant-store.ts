import type { ApiKeyScope } from "./api-key-scope.ts";

export type TenantStatus = "active" | "suspended";

export interface Tenant {
  id: string;
  name: string;
  /** Unix seconds, like every timestamp here. */
  createdAt: number;
  status: TenantStatus;
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string | null;
  /** What a presented key is looked up by (see readLookupPrefix in api-key-format.ts). */
  prefix: string;
  /** Hex SHA-256 of the whole key. */
  secretHash: string;
  last4: string;
  scopes: ApiKeyScope[];
  createdAt: number;
  /** From then on the key is refused; in the future while a rotation's grace period runs. */
  revokedAt: number | null;
  rotatedFrom: string | null;
}

export type AuditAction =
  | "tenant.created"
  | "tenant.limits_updated"
  | "api_key.created"
  | "api_key.rotated"
  | "api_key.revoked"
  | "webhook_endpoint.created"
  | "webhook_endpoint.updated"
  | "webhook_endpoint.deleted"
  | "webhook_endpoint.secret_rotated"
  | "webhook_endpoint.disabled"
  | "harness.created"
  | "harness_label.moved"
  | "harness_label.rolled_back";

export interface AuditDraft {
  tenantId: string;
  /** `admin`, `system` or a key id. */
  actor: string;
  action: AuditAction;
  /** The tenant or key acted on. */
  target: string;
  details: Record<string, unknown>;
  createdAt: number;
}

export interface AuditEntry extends Omit<AuditDraft, "action"> {
  /** Increasing across the whole database, so per tenant it has gaps: a cursor, not a count. */
  seq: number;
  /** Read as text: entries written by another build may carry actions this one does not know. */
  action: string;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/**
 * Tenants, their API keys and the audit log. A capability type; D1 implements it in production. Every method
 * that changes something takes the audit entry that records it and must append it atomically with the change.
 */
export interface TenantStore {
  createTenant(tenant: Tenant, audit: AuditDraft): Promise<void>;
  getTenant(id: string): Promise<Tenant | undefined>;
  /** Records a change made elsewhere (e.g. a tenant's limits, kept in its limiter object). */
  appendAudit(audit: AuditDraft): Promise<void>;
  /** Newest first by default; `after` is a tenant id from a previous page. */
  listTenants(query: {
    after?: string | undefined;
    limit: number;
    order: "asc" | "desc";
  }): Promise<Page<Tenant> | { error: "unknown_after" }>;
  createApiKey(key: ApiKeyRecord, audit: AuditDraft): Promise<void>;
  /**
   * Inserts whichever of the tenant and the key is missing, each with its own audit entry and only when it is
   * inserted, so concurrent calls (many first requests with the dev key) leave one of each.
   */
  ensureTenantKey(
    tenant: Tenant,
    key: ApiKeyRecord,
    audit: { tenant: AuditDraft; key: AuditDraft },
  ): Promise<void>;
  /** The key with this lookup prefix and its tenant's status (one indexed read per authenticated request). */
  findApiKeyByPrefix(prefix: string): Promise<{ key: ApiKeyRecord; tenantStatus: TenantStatus } | undefined>;
  getApiKey(tenantId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Oldest first, revoked keys included. */
  listApiKeys(tenantId: string): Promise<ApiKeyRecord[]>;
  /**
   * Adds `successor` (whose `rotatedFrom` names the old key) and sets the old key's `revokedAt`, atomically;
   * `conflict` when the old key already has a successor (a concurrent rotation won) and nothing changed.
   */
  rotateApiKey(change: {
    old: ApiKeyRecord;
    revokeOldAt: number;
    successor: ApiKeyRecord;
    audit: AuditDraft;
  }): Promise<"rotated" | "conflict">;
  revokeApiKey(change: { key: ApiKeyRecord; revokedAt: number; audit: AuditDraft }): Promise<void>;
  /** Newest first by default; `afterSeq` is exclusive. */
  listAuditLog(
    tenantId: string,
    query: { afterSeq?: number; limit: number; order: "asc" | "desc" },
  ): Promise<Page<AuditEntry>>;
}
