import { PLAIN_SECRETS, createSecretSealer, type SecretSealer } from "../webhooks/create-secret-sealer.ts";
import type { WebhookEndpointStore } from "../webhooks/webhook-endpoint-store.ts";
import { createD1WebhookEndpointStore } from "./d1-webhook-endpoint-store.ts";
import type { Env } from "./env.ts";

let cached: { key: string; sealer: SecretSealer } | undefined;

/** The endpoint store over D1, sealing secrets with `MOL_WEBHOOK_SECRET_KEY` when it is set (production). */
export function openWebhookEndpointStore(env: Env): WebhookEndpointStore {
  const key = env.MOL_WEBHOOK_SECRET_KEY;
  if (!key) return createD1WebhookEndpointStore(env.DB, PLAIN_SECRETS);
  if (cached?.key !== key) cached = { key, sealer: createSecretSealer(key) };
  return createD1WebhookEndpointStore(env.DB, cached.sealer);
}
