import { describe, expect, it } from "vitest";
import { authenticateApiKey } from "../../workers/src/tenancy/authenticate-api-key.ts";
import { KeyLookupCache, cacheKeyLookups } from "../../workers/src/tenancy/cache-key-lookups.ts";
import { parseApiKey } from "../../workers/src/tenancy/api-key-format.ts";
import { createTenantAdmin } from "../../workers/src/tenancy/create-tenant-admin.ts";
import { createMemoryTenantStore } from "./create-memory-tenant-store.ts";

const T0 = 1_800_000_000_000;
const TTL_MS = 5_000;

/** One isolate: a cache shared by its requests, each request with its own cached store over one database. */
function setUp() {
  const memory = createMemoryTenantStore();
  let now = T0;
  let next = 0;
  const cache = new KeyLookupCache(() => now, TTL_MS);
  const admin = (store = cacheKeyLookups(memory.store, cache)) =>
    createTenantAdmin({ store, now: () => now, newId: (p) => `${p}_${String(++next).padStart(32, "0")}` });
  const authenticate = (key: string) =>
    authenticateApiKey(key, { store: cacheKeyLookups(memory.store, cache), now });
  return { memory, admin, authenticate, advance: (ms: number) => (now += ms) };
}

describe("cached key lookups", () => {
  it("reads D1 once per key within the TTL, and again after it", async () => {
    const env = setUp();
    const tenant = await env.admin().createTenant("admin", { name: "acme" });
    const issued = await env.admin().createApiKey("admin", tenant.id, { scopes: ["responses"] });
    if (!issued) throw new Error("tenant vanished");
    const before = env.memory.counts.prefixLookups;
    for (let i = 0; i < 3; i++)
      expect(await env.authenticate(issued.key)).toMatchObject({ tenantId: tenant.id });
    expect(env.memory.counts.prefixLookups - before).toBe(1);
    env.advance(TTL_MS);
    expect(await env.authenticate(issued.key)).toMatchObject({ tenantId: tenant.id });
    expect(env.memory.counts.prefixLookups - before).toBe(2);
  });

  it("refuses a key revoked through this isolate at once; one revoked elsewhere within the TTL", async () => {
    const env = setUp();
    const tenant = await env.admin().createTenant("admin", { name: "acme" });
    const here = await env.admin().createApiKey("admin", tenant.id, { scopes: ["responses"] });
    const there = await env.admin().createApiKey("admin", tenant.id, { scopes: ["responses"] });
    if (!here || !there) throw new Error("tenant vanished");
    expect(await env.authenticate(here.key)).toBeDefined();
    expect(await env.authenticate(there.key)).toBeDefined();

    await env.admin().revokeApiKey("admin", tenant.id, here.record.id);
    expect(await env.authenticate(here.key)).toBeUndefined();

    // Another isolate writes to the database directly: this one trusts its lookup until the TTL runs out.
    expect(await env.authenticate(there.key)).toBeDefined();
    await env.admin(env.memory.store).revokeApiKey("admin", tenant.id, there.record.id);
    expect(await env.authenticate(there.key)).toBeDefined();
    env.advance(TTL_MS);
    expect(await env.authenticate(there.key)).toBeUndefined();
  });

  it("never keeps an unknown key: each try reads the database (a key made elsewhere must work at once)", async () => {
    const env = setUp();
    const tenant = await env.admin().createTenant("admin", { name: "acme" });
    const issued = await env.admin().createApiKey("admin", tenant.id, { scopes: ["responses"] });
    if (!issued) throw new Error("tenant vanished");
    // Another prefix: a key of this format that was never issued (one with an issued prefix finds that key).
    const prefix = parseApiKey(issued.key)?.prefix ?? "";
    const unknown = issued.key.replace(prefix, `${prefix.slice(0, -1)}${prefix.endsWith("a") ? "b" : "a"}`);
    const before = env.memory.counts.prefixLookups;
    expect(await env.authenticate(unknown)).toBeUndefined();
    expect(await env.authenticate(unknown)).toBeUndefined();
    expect(env.memory.counts.prefixLookups - before).toBe(2);
  });
});
