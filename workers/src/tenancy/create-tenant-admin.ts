import { DEFAULT_API_KEY_SCOPES, type ApiKeyScope } from "./api-key-scope.ts";
import { isApiKeyActive, issueApiKey } from "./api-key-format.ts";
import type { ApiKeyRecord, Tenant, TenantStore } from "./tenant-store.ts";

/** A key as created: `key` is the only time the secret exists outside the client. */
export interface IssuedApiKey {
  key: string;
  record: ApiKeyRecord;
}

export type RotateResult =
  | { ok: true; issued: IssuedApiKey; old: ApiKeyRecord }
  | { ok: false; error: "key_not_found" | "key_inactive" | "already_rotated" };

export interface TenantAdmin {
  createTenant(actor: string, input: { name: string }): Promise<Tenant>;
  /** Undefined for an unknown tenant. */
  createApiKey(
    actor: string,
    tenantId: string,
    input: { name?: string | undefined; scopes?: readonly ApiKeyScope[] | undefined },
  ): Promise<IssuedApiKey | undefined>;
  /**
   * A successor with the same name and scopes; the old key is refused `graceSeconds` from now (0: at once, the
   * right call for a leaked key; a grace lets clients switch over without an outage).
   */
  rotateApiKey(actor: string, tenantId: string, keyId: string, graceSeconds: number): Promise<RotateResult>;
  /** The key, revoked now; a key already refused is returned unchanged and nothing is logged. */
  revokeApiKey(actor: string, tenantId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
}

/** Tenant and key management over a {@link TenantStore}; every change goes to the audit log with it. */
export function createTenantAdmin(context: {
  store: TenantStore;
  /** Unix ms. */
  now(): number;
  newId(prefix: string): string;
}): TenantAdmin {
  const { store } = context;
  const nowSeconds = () => Math.floor(context.now() / 1000);
  return {
    async createTenant(actor, input) {
      const tenant: Tenant = {
        id: context.newId("ten"),
        name: input.name,
        createdAt: nowSeconds(),
        status: "active",
      };
      await store.createTenant(tenant, {
        tenantId: tenant.id,
        actor,
        action: "tenant.created",
        target: tenant.id,
        details: { name: tenant.name },
        createdAt: tenant.createdAt,
      });
      return tenant;
    },

    async createApiKey(actor, tenantId, input) {
      if (!(await store.getTenant(tenantId))) return undefined;
      const issued = await issueApiKey({
        id: context.newId("key"),
        tenantId,
        name: input.name ?? null,
        scopes: input.scopes ?? DEFAULT_API_KEY_SCOPES,
        createdAt: nowSeconds(),
      });
      const { record } = issued;
      await store.createApiKey(record, {
        tenantId,
        actor,
        action: "api_key.created",
        target: record.id,
        details: { name: record.name, scopes: record.scopes, prefix: record.prefix },
        createdAt: record.createdAt,
      });
      return issued;
    },

    async rotateApiKey(actor, tenantId, keyId, graceSeconds) {
      const old = await store.getApiKey(tenantId, keyId);
      if (!old) return { ok: false, error: "key_not_found" };
      // A key already on its way out (revoked, or inside another rotation's grace) has had its successor.
      if (old.revokedAt !== null) return { ok: false, error: "key_inactive" };
      const now = nowSeconds();
      const issued = await issueApiKey({
        id: context.newId("key"),
        tenantId,
        name: old.name,
        scopes: old.scopes,
        createdAt: now,
        rotatedFrom: old.id,
      });
      const revokeOldAt = now + graceSeconds;
      const outcome = await store.rotateApiKey({
        old,
        revokeOldAt,
        successor: issued.record,
        audit: {
          tenantId,
          actor,
          action: "api_key.rotated",
          target: old.id,
          details: { successor: issued.record.id, revoked_at: revokeOldAt, grace_seconds: graceSeconds },
          createdAt: now,
        },
      });
      if (outcome === "conflict") return { ok: false, error: "already_rotated" };
      return { ok: true, issued, old: { ...old, revokedAt: revokeOldAt } };
    },

    async revokeApiKey(actor, tenantId, keyId) {
      const key = await store.getApiKey(tenantId, keyId);
      const now = nowSeconds();
      if (!key || !isApiKeyActive(key, now)) return key;
      await store.revokeApiKey({
        key,
        revokedAt: now,
        audit: { tenantId, actor, action: "api_key.revoked", target: key.id, details: {}, createdAt: now },
      });
      return { ...key, revokedAt: now };
    },
  };
}
