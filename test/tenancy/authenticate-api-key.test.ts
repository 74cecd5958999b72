import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { authenticateApiKey, DEV_TENANT_ID } from "../../workers/src/tenancy/authenticate-api-key.ts";
import { createTenantAdmin } from "../../workers/src/tenancy/create-tenant-admin.ts";
import { createMemoryTenantStore } from "./create-memory-tenant-store.ts";

const DEV_KEY = "sk-molmesh-dev-local";
const T0 = 1_800_000_000_000;

function setUp() {
  const memory = createMemoryTenantStore();
  let now = T0;
  let next = 0;
  const admin = createTenantAdmin({
    store: memory.store,
    now: () => now,
    newId: (prefix) => `${prefix}_${String(++next).padStart(32, "0")}`,
  });
  const authenticate = (key: string, devApiKey?: string) =>
    authenticateApiKey(key, { store: memory.store, devApiKey, now });
  return {
    ...memory,
    admin,
    authenticate,
    advance: (seconds: number) => (now += seconds * 1000),
  };
}

async function issueKey(env: ReturnType<typeof setUp>) {
  const tenant = await env.admin.createTenant("admin", { name: "acme" });
  const issued = await env.admin.createApiKey("admin", tenant.id, { scopes: ["responses", "admin"] });
  if (!issued) throw new Error("tenant vanished");
  return { tenant, ...issued };
}

describe("authenticateApiKey", () => {
  it("accepts an issued key with its tenant, id and scopes", async () => {
    const env = setUp();
    const { tenant, key, record } = await issueKey(env);
    expect(await env.authenticate(key)).toEqual({
      tenantId: tenant.id,
      keyId: record.id,
      scopes: ["responses", "admin"],
    });
  });

  it("refuses a key whose prefix is stored but whose secret differs (the hash comparison decides)", async () => {
    const env = setUp();
    const { key } = await issueKey(env);
    const forged = `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`;
    expect(await env.authenticate(forged)).toBeUndefined();
    expect(env.counts.prefixLookups).toBe(1);
  });

  it("refuses strings that are neither an issued key nor the dev key without reading the store", async () => {
    const env = setUp();
    for (const key of ["sk-wrong", "", "sk-mol-short_x", DEV_KEY])
      expect(await env.authenticate(key)).toBeUndefined();
    expect(env.counts.prefixLookups).toBe(0);
  });

  it("refuses a revoked key, and a suspended tenant's key", async () => {
    const env = setUp();
    const { tenant, key, record } = await issueKey(env);
    await env.admin.revokeApiKey("admin", tenant.id, record.id);
    expect(await env.authenticate(key)).toBeUndefined();

    const other = await issueKey(env);
    const stored = env.tenants.get(other.tenant.id);
    if (stored) stored.status = "suspended";
    expect(await env.authenticate(other.key)).toBeUndefined();
  });

  it("keeps a rotated key working only through its grace period; the successor works at once", async () => {
    const env = setUp();
    const { tenant, key, record } = await issueKey(env);
    const rotated = await env.admin.rotateApiKey("admin", tenant.id, record.id, 60);
    if (!rotated.ok) throw new Error(rotated.error);
    expect((await env.authenticate(rotated.issued.key))?.keyId).toBe(rotated.issued.record.id);
    expect(rotated.issued.record.scopes).toEqual(record.scopes);
    env.advance(59);
    expect((await env.authenticate(key))?.keyId).toBe(record.id);
    env.advance(1);
    expect(await env.authenticate(key)).toBeUndefined();
    expect(await env.authenticate(rotated.issued.key)).toBeDefined();
  });

  it("refuses the old key at once when rotated without a grace period", async () => {
    const env = setUp();
    const { tenant, key, record } = await issueKey(env);
    expect((await env.admin.rotateApiKey("admin", tenant.id, record.id, 0)).ok).toBe(true);
    expect(await env.authenticate(key)).toBeUndefined();
  });
});

describe("the dev key (MOL_DEV_API_KEY)", () => {
  it("bootstraps the dev tenant and a full-scope key on first use, once, even under concurrency", async () => {
    const env = setUp();
    const principals = await Promise.all(Array.from({ length: 5 }, () => env.authenticate(DEV_KEY, DEV_KEY)));
    for (const principal of principals) {
      expect(principal?.tenantId).toBe(DEV_TENANT_ID);
      expect(principal?.scopes).toEqual(["conversations", "responses", "chat", "admin", "webhooks"]);
    }
    expect(env.tenants.size).toBe(1);
    expect(env.keys.size).toBe(1);
    const [stored] = env.keys.values();
    expect(stored?.secretHash).toBe(createHash("sha256").update(DEV_KEY).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(DEV_KEY);
    expect(env.audit.map((e) => [e.action, e.actor])).toEqual([
      ["tenant.created", "system"],
      ["api_key.created", "system"],
    ]);
  });

  it("does nothing without the var, and stops working when the var changes or is unset", async () => {
    const env = setUp();
    expect(await env.authenticate(DEV_KEY)).toBeUndefined();
    expect(env.keys.size).toBe(0);
    expect(await env.authenticate(DEV_KEY, DEV_KEY)).toBeDefined();
    expect(await env.authenticate(DEV_KEY)).toBeUndefined();
    expect(await env.authenticate(DEV_KEY, "sk-another-dev-key")).toBeUndefined();
    expect(await env.authenticate("sk-another-dev-key", "sk-another-dev-key")).toBeDefined();
  });

  it("stays revoked once revoked, although the var still names it", async () => {
    const env = setUp();
    const principal = await env.authenticate(DEV_KEY, DEV_KEY);
    if (!principal) throw new Error("no dev principal");
    await env.admin.revokeApiKey("admin", DEV_TENANT_ID, principal.keyId);
    expect(await env.authenticate(DEV_KEY, DEV_KEY)).toBeUndefined();
  });
});

describe("createTenantAdmin", () => {
  it("rotates a key once: a second rotation of the same key is refused", async () => {
    const env = setUp();
    const { tenant, record } = await issueKey(env);
    expect((await env.admin.rotateApiKey("admin", tenant.id, record.id, 3600)).ok).toBe(true);
    expect(await env.admin.rotateApiKey("admin", tenant.id, record.id, 0)).toEqual({
      ok: false,
      error: "key_inactive",
    });
    expect(await env.admin.rotateApiKey("admin", tenant.id, "key_unknown", 0)).toEqual({
      ok: false,
      error: "key_not_found",
    });
  });

  it("reports a lost race as already_rotated", async () => {
    const env = setUp();
    const { tenant, record } = await issueKey(env);
    const stale = { ...record };
    expect((await env.admin.rotateApiKey("admin", tenant.id, record.id, 0)).ok).toBe(true);
    // The store sees the key already retired, as a concurrent rotation that won would leave it.
    const getApiKey = env.store.getApiKey.bind(env.store);
    env.store.getApiKey = () => Promise.resolve(stale);
    expect(await env.admin.rotateApiKey("admin", tenant.id, record.id, 0)).toEqual({
      ok: false,
      error: "already_rotated",
    });
    env.store.getApiKey = getApiKey;
  });

  it("audits each change once: revoking twice logs one revocation; another tenant's key is not found", async () => {
    const env = setUp();
    const { tenant, record } = await issueKey(env);
    const other = await env.admin.createTenant("admin", { name: "other" });
    expect(await env.admin.revokeApiKey("admin", other.id, record.id)).toBeUndefined();
    const first = await env.admin.revokeApiKey("admin", tenant.id, record.id);
    env.advance(10);
    const second = await env.admin.revokeApiKey("admin", tenant.id, record.id);
    expect(second?.revokedAt).toBe(first?.revokedAt);
    expect(env.audit.filter((e) => e.tenantId === tenant.id).map((e) => e.action)).toEqual([
      "tenant.created",
      "api_key.created",
      "api_key.revoked",
    ]);
  });

  it("refuses a key for an unknown tenant", async () => {
    const env = setUp();
    expect(await env.admin.createApiKey("admin", "ten_missing", {})).toBeUndefined();
    expect(env.audit).toEqual([]);
  });
});
