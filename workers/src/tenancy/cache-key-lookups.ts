import { IsolateCache, clearedAfter } from "../lib/isolate-cache.ts";
import type { TenantStore } from "./tenant-store.ts";

/**
 * How long an isolate trusts a key it looked up: every authenticated request would otherwise pay a D1 read. A
 * change made through this isolate (a key created, rotated or revoked) drops what it cached at once; one made
 * through another isolate reaches this one within this long. Expiry and a rotation's grace period are still
 * checked against the clock on every request (authenticate-api-key.ts), so they hold to the second.
 */
export const KEY_LOOKUP_TTL_MS = 5_000;

type Found = Awaited<ReturnType<TenantStore["findApiKeyByPrefix"]>>;

/** The key lookups of one isolate, shared by its requests (each request gets its own store). */
export class KeyLookupCache extends IsolateCache<NonNullable<Found>> {
  constructor(now: () => number, ttlMs = KEY_LOOKUP_TTL_MS) {
    super(now, ttlMs);
  }
}

/** `store` with its key lookups served from `cache`; every write through it clears the cache. */
export function cacheKeyLookups(store: TenantStore, cache: KeyLookupCache): TenantStore {
  return {
    ...store,
    async findApiKeyByPrefix(prefix) {
      const cached = cache.read(prefix);
      if (cached) return cached;
      const found = await store.findApiKeyByPrefix(prefix);
      // Only keys that exist are kept: a new key must work at once, and unknown keys must not fill memory.
      if (found) cache.write(prefix, found);
      return found;
    },
    createTenant: clearedAfter(cache, store.createTenant.bind(store)),
    createApiKey: clearedAfter(cache, store.createApiKey.bind(store)),
    ensureTenantKey: clearedAfter(cache, store.ensureTenantKey.bind(store)),
    rotateApiKey: clearedAfter(cache, store.rotateApiKey.bind(store)),
    revokeApiKey: clearedAfter(cache, store.revokeApiKey.bind(store)),
  };
}
