import type { WebhookEventType } from "../db/webhook-tables.ts";
import { IsolateCache, clearedAfter } from "../lib/isolate-cache.ts";
import type { WebhookEndpoint, WebhookEndpointStore } from "./webhook-endpoint-store.ts";

/**
 * How long an isolate trusts the list of a tenant's endpoints subscribed to an event type. Every turn raises an
 * event (and its summary another); without the cache each one paid a D1 read, and for the many tenants with no
 * endpoint at all, an outbox row, an alarm and a delete as well. A change made through this isolate (an endpoint
 * created, updated, rotated, removed) drops the cache at once; one made through another isolate reaches this one's
 * conversations within this long, the same bound as for API keys (tenancy/cache-key-lookups.ts).
 */
export const SUBSCRIPTION_TTL_MS = 5_000;

/** The subscription lists of one isolate, by tenant and event type, shared by its requests and conversations. */
export class SubscriptionCache extends IsolateCache<WebhookEndpoint[]> {
  constructor(now: () => number, ttlMs = SUBSCRIPTION_TTL_MS) {
    super(now, ttlMs);
  }
}

/** `store` with `listSubscribed` served from `cache`; every endpoint change through it clears the cache. */
export function cacheSubscriptions(
  store: WebhookEndpointStore,
  cache: SubscriptionCache,
): WebhookEndpointStore {
  return {
    ...store,
    async listSubscribed(tenantId, type: WebhookEventType) {
      const key = `${tenantId}\u0000${type}`;
      const cached = cache.read(key);
      if (cached) return cached;
      const endpoints = await store.listSubscribed(tenantId, type);
      cache.write(key, endpoints);
      return endpoints;
    },
    create: clearedAfter(cache, store.create.bind(store)),
    update: clearedAfter(cache, store.update.bind(store)),
    rotateSecret: clearedAfter(cache, store.rotateSecret.bind(store)),
    remove: clearedAfter(cache, store.remove.bind(store)),
  };
}
