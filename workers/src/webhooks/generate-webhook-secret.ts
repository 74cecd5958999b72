/** Prefix that marks a Standard Webhooks secret; the rest is the base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** A fresh `whsec_` secret: 32 random bytes is inside the spec's 24–64 range and matches HMAC-SHA256's block strength. */
export function generateWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  // btoa over a binary string, not Buffer, because workerd has no Buffer without the Node compatibility flag.
  return WEBHOOK_SECRET_PREFIX + btoa(String.fromCharCode(...bytes));
}
