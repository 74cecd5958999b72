import type { TenantStore } from "./tenant-store.ts";

/**
 * How long an isolate trusts a key it looked up: every authenticated request would otherwise pay a D1 read. A
 * change made through this isolate (a key created, rotated or revoked) drops what it cached at once; one made
 * through another isolate reaches this one within this long. Expiry and a rotation's grace period are still
 * checked against the clock on every request (authenticate-api-key.ts), so they hold to the second.
 */
export const KEY_LOOKUP_TTL_MS = 5_000;
/** Enough for the keys of one isolate's traffic; past it the oldest lookups go first. */
const MAX_CACHED_KEYS = 1_000;

type Found = Awaited<ReturnType<TenantStore["findApiKeyByPrefix"]>>;

/** The lookups of one isolate, shared by its requests (each request gets its own store). */
export class KeyLookupCache {
  readonly #entries = new Map<string, { found: NonNullable<Found>; expiresAt: number }>();
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(now: () => number, ttlMs = KEY_LOOKUP_TTL_MS) {
    this.#now = now;
    this.#ttlMs = ttlMs;
  }

  read(prefix: string): Found {
    const entry = this.#entries.get(prefix);
    if (!entry) return undefined;
    if (entry.expiresAt > this.#now()) return entry.found;
    this.#entries.delete(prefix);
    return undefined;
  }

  /** Only keys that exist are kept: a new key must work at once, and unknown keys must not fill memory. */
  write(prefix: string, found: Found): void {
    if (!found) return;
    this.#entries.delete(prefix);
    this.#entries.set(prefix, { found, expiresAt: this.#now() + this.#ttlMs });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= MAX_CACHED_KEYS) break;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** `store` with its key lookups served from `cache`; every write through it clears the cache. */
export function cacheKeyLookups(store: TenantStore, cache: KeyLookupCache): TenantStore {
  const cleared = <A extends unknown[], R>(write: (...args: A) => Promise<R>) => {
    return async (...args: A): Promise<R> => {
      try {
        return await write(...args);
      } finally {
        cache.clear();
      }
    };
  };
  return {
    ...store,
    async findApiKeyByPrefix(prefix) {
      const cached = cache.read(prefix);
      if (cached) return cached;
      const found = await store.findApiKeyByPrefix(prefix);
      cache.write(prefix, found);
      return found;
    },
    createTenant: cleared(store.createTenant.bind(store)),
    createApiKey: cleared(store.createApiKey.bind(store)),
    ensureTenantKey: cleared(store.ensureTenantKey.bind(store)),
    rotateApiKey: cleared(store.rotateApiKey.bind(store)),
    revokeApiKey: cleared(store.revokeApiKey.bind(store)),
  };
}
