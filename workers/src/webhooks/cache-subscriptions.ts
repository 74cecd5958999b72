import type { WebhookEventType } from "../../../schema/db/webhook-tables.ts";
import type { WebhookEndpoint, WebhookEndpointStore } from "./webhook-endpoint-store.ts";

/**
 * How long an isolate trusts the list of a tenant's endpoints subscribed to an event type. Every turn raises an
 * event (and its summary another); without the cache each one paid a D1 read, and for the many tenants with no
 * endpoint at all, an outbox row, an alarm and a delete as well. A change made through this isolate (an endpoint
 * created, updated, rotated, removed) drops the cache at once; one made through another isolate reaches this one's
 * conversations within this long, the same bound as for API keys (tenancy/cache-key-lookups.ts).
 */
export const SUBSCRIPTION_TTL_MS = 5_000;
/** Enough for one isolate's tenants; past it the oldest go first. */
const MAX_CACHED_SUBSCRIPTIONS = 1_000;

/** The subscription lists of one isolate, shared by its requests and conversation objects. */
export class SubscriptionCache {
  readonly #entries = new Map<string, { endpoints: WebhookEndpoint[]; expiresAt: number }>();
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(now: () => number, ttlMs = SUBSCRIPTION_TTL_MS) {
    this.#now = now;
    this.#ttlMs = ttlMs;
  }

  read(tenantId: string, type: WebhookEventType): WebhookEndpoint[] | undefined {
    const key = `${tenantId}\u0000${type}`;
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > this.#now()) return entry.endpoints;
    this.#entries.delete(key);
    return undefined;
  }

  write(tenantId: string, type: WebhookEventType, endpoints: WebhookEndpoint[]): void {
    const key = `${tenantId}\u0000${type}`;
    this.#entries.delete(key);
    this.#entries.set(key, { endpoints, expiresAt: this.#now() + this.#ttlMs });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= MAX_CACHED_SUBSCRIPTIONS) break;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** `store` with `listSubscribed` served from `cache`; every endpoint change through it clears the cache. */
export function cacheSubscriptions(
  store: WebhookEndpointStore,
  cache: SubscriptionCache,
): WebhookEndpointStore {
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
    async listSubscribed(tenantId, type) {
      const cached = cache.read(tenantId, type);
      if (cached) return cached;
      const endpoints = await store.listSubscribed(tenantId, type);
      cache.write(tenantId, type, endpoints);
      return endpoints;
    },
    create: cleared(store.create.bind(store)),
    update: cleared(store.update.bind(store)),
    rotateSecret: cleared(store.rotateSecret.bind(store)),
    remove: cleared(store.remove.bind(store)),
  };
}
