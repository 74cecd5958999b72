/**
 * `sk-mol-<prefix>_<secret>`: the prefix is public (shown in listings, indexed for lookup); the secret carries
 * 32 base62 characters ≈ 190 bits of randomness, so a fast hash (SHA-256) is safe to store: nothing guessable
 * is left to brute-force offline.
 */
export const API_KEY_FORMAT = {
  tag: "sk-mol-",
  prefixLength: 12,
  secretLength: 32,
  pattern: /^sk-mol-([0-9A-Za-z]{12})_([0-9A-Za-z]{32})$/,
} as const;

/** The key's public prefix and secret, or undefined for any string that is not a key we issue. */
export function parseApiKey(apiKey: string): { prefix: string; secret: string } | undefined {
  const match = API_KEY_FORMAT.pattern.exec(apiKey);
  return match?.[1] && match[2] ? { prefix: match[1], secret: match[2] } : undefined;
}
