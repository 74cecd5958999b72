import { PLAIN_SECRETS, createSecretSealer, type SecretSealer } from "../webhooks/create-secret-sealer.ts";
import type { WebhookEndpointStore } from "../webhooks/webhook-endpoint-store.ts";
import { SubscriptionCache, cacheSubscriptions } from "../webhooks/cache-subscriptions.ts";
import { createD1WebhookEndpointStore } from "./d1-webhook-endpoint-store.ts";
import { edgeConfigOf, type Env } from "./env.ts";

let cached: { key: string; sealer: SecretSealer } | undefined;
/** This isolate's: the Worker's admin routes and the conversation objects it hosts share it. */
const subscriptions = new SubscriptionCache(() => Date.now());

/**
 * The endpoint store over D1, sealing secrets with `MOL_WEBHOOK_SECRET_KEY` when it is set (production), with
 * subscription lists cached per isolate.
 */
export function openWebhookEndpointStore(env: Env): WebhookEndpointStore {
  const key = edgeConfigOf(env).webhooks.secretKey;
  if (!key) return cacheSubscriptions(createD1WebhookEndpointStore(env.DB, PLAIN_SECRETS), subscriptions);
  if (cached?.key !== key) cached = { key, sealer: createSecretSealer(key) };
  return cacheSubscriptions(createD1WebhookEndpointStore(env.DB, cached.sealer), subscriptions);
}
