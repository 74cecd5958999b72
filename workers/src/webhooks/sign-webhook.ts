import { Webhook } from "standardwebhooks";

export interface WebhookToSign {
  /** Stable across retries: receivers dedupe on it. */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  body: string;
  /** `whsec_<base64>`; two during rotation, so receivers holding either secret accept the delivery. */
  secrets: readonly string[];
}

/** A type alias, not an interface, so it stays assignable to `Record<string, string>` and `HeadersInit`. */
export type StandardWebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/**
 * Signs one delivery attempt the Standard Webhooks way. The `standardwebhooks` package is pure JS (stablelib base64 +
 * fast-sha256, no Buffer or node:crypto), so it is safe in workerd and keeps our bytes identical to what receivers
 * using the same library compute.
 */
export function signWebhook({ id, timestamp, body, secrets }: WebhookToSign): StandardWebhookHeaders {
  if (secrets.length === 0) throw new Error("signWebhook needs at least one secret");
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new Error("timestamp must be whole unix seconds");
  // Whitespace would break the header line (header injection); an empty id defeats receiver-side dedupe.
  if (id === "" || /\s/.test(id)) throw new Error("webhook id must be non-empty and without whitespace");
  const date = new Date(timestamp * 1000);
  const signatures = secrets.map((secret) => new Webhook(secret).sign(id, date, body));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}
