import type {
  ApiKeyRecord,
  AuditDraft,
  AuditEntry,
  Tenant,
  TenantStore,
} from "../../workers/src/tenancy/tenant-store.ts";

/** The TenantStore contract in memory, with a count of reads, for unit tests of the logic above it. */
export function createMemoryTenantStore() {
  const tenants = new Map<string, Tenant>();
  const keys = new Map<string, ApiKeyRecord>();
  const audit: AuditEntry[] = [];
  const counts = { prefixLookups: 0 };
  const append = (draft: AuditDraft) => audit.push({ ...draft, seq: audit.length + 1 });
  const store: TenantStore = {
    createTenant(tenant, entry) {
      tenants.set(tenant.id, { ...tenant });
      append(entry);
      return Promise.resolve();
    },
    getTenant(id) {
      return Promise.resolve(tenants.get(id));
    },
    listTenants(query) {
      const sorted = [...tenants.values()].sort(
        (a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id),
      );
      if (query.order === "desc") sorted.reverse();
      const start = query.after === undefined ? 0 : sorted.findIndex((t) => t.id === query.after) + 1;
      if (start === 0 && query.after !== undefined) return Promise.resolve({ error: "unknown_after" });
      const rest = sorted.slice(start);
      return Promise.resolve({ data: rest.slice(0, query.limit), hasMore: rest.length > query.limit });
    },
    appendAudit(entry) {
      append(entry);
      return Promise.resolve();
    },
    createApiKey(key, entry) {
      keys.set(key.id, { ...key });
      append(entry);
      return Promise.resolve();
    },
    ensureTenantKey(tenant, key, entries) {
      if (!tenants.has(tenant.id)) {
        tenants.set(tenant.id, { ...tenant });
        append(entries.tenant);
      }
      if (![...keys.values()].some((k) => k.id === key.id || k.prefix === key.prefix)) {
        keys.set(key.id, { ...key });
        append(entries.key);
      }
      return Promise.resolve();
    },
    findApiKeyByPrefix(prefix) {
      counts.prefixLookups++;
      const key = [...keys.values()].find((k) => k.prefix === prefix);
      const tenant = key && tenants.get(key.tenantId);
      return Promise.resolve(key && tenant ? { key: { ...key }, tenantStatus: tenant.status } : undefined);
    },
    getApiKey(tenantId, keyId) {
      const key = keys.get(keyId);
      return Promise.resolve(key?.tenantId === tenantId ? { ...key } : undefined);
    },
    listApiKeys(tenantId) {
      return Promise.resolve(
        [...keys.values()].filter((k) => k.tenantId === tenantId).map((k) => ({ ...k })),
      );
    },
    rotateApiKey({ old, revokeOldAt, successor, audit: entry }) {
      const current = keys.get(old.id);
      if (!current || current.revokedAt !== null) return Promise.resolve("conflict");
      current.revokedAt = revokeOldAt;
      keys.set(successor.id, { ...successor });
      append(entry);
      return Promise.resolve("rotated");
    },
    revokeApiKey({ key, revokedAt, audit: entry }) {
      const current = keys.get(key.id);
      if (!current || (current.revokedAt !== null && current.revokedAt <= revokedAt))
        return Promise.resolve();
      current.revokedAt = revokedAt;
      append(entry);
      return Promise.resolve();
    },
    listAuditLog(tenantId, query) {
      const own = audit.filter((e) => e.tenantId === tenantId);
      if (query.order === "desc") own.reverse();
      const after = query.afterSeq;
      const rest =
        after === undefined
          ? own
          : own.filter((e) => (query.order === "asc" ? e.seq > after : e.seq < after));
      return Promise.resolve({ data: rest.slice(0, query.limit), hasMore: rest.length > query.limit });
    },
  };
  return { store, tenants, keys, audit, counts };
}
