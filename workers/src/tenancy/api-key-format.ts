import { sha256Hex } from "../../../schema/harness/content-hash.ts";
import type { ApiKeyScope } from "./api-key-scope.ts";
import type { ApiKeyRecord } from "./tenant-store.ts";

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

/**
 * The `prefix` a key is stored and looked up under: the public prefix of a key we issued; for any other string
 * (only the local mesh's MOL_DEV_API_KEY is stored that way) the start of its hash, which reveals nothing of it.
 */
export function readLookupPrefix(apiKey: string, secretHash: string): string {
  return parseApiKey(apiKey)?.prefix ?? `sha256:${secretHash.slice(0, 16)}`;
}

/** A fresh key and the record that stores it; `key` exists only here, to be shown once and never again. */
export async function issueApiKey(init: {
  id: string;
  tenantId: string;
  name: string | null;
  scopes: readonly ApiKeyScope[];
  createdAt: number;
  rotatedFrom?: string;
}): Promise<{ key: string; record: ApiKeyRecord }> {
  const prefix = generateBase62(API_KEY_FORMAT.prefixLength);
  const key = `${API_KEY_FORMAT.tag}${prefix}_${generateBase62(API_KEY_FORMAT.secretLength)}`;
  return {
    key,
    record: {
      id: init.id,
      tenantId: init.tenantId,
      name: init.name,
      prefix,
      secretHash: await sha256Hex(key),
      last4: key.slice(-4),
      scopes: [...new Set(init.scopes)],
      createdAt: init.createdAt,
      revokedAt: null,
      rotatedFrom: init.rotatedFrom ?? null,
    },
  };
}

/** Not revoked yet at `nowSeconds` (a rotation's grace period sets `revokedAt` in the future). */
export function isApiKeyActive(key: Pick<ApiKeyRecord, "revokedAt">, nowSeconds: number): boolean {
  return key.revokedAt === null || key.revokedAt > nowSeconds;
}

const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 248 = 4 × 62: bytes at or above it are dropped, so `byte % 62` is uniform over the alphabet. */
const UNBIASED_LIMIT = 248;
/** The most `getRandomValues` fills in one call. */
const MAX_RANDOM_BYTES = 65_536;

/** `length` uniformly random base62 characters from `crypto.getRandomValues` (log2(62) ≈ 5.95 bits each). */
export function generateBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    // A few spare bytes per round: about 3 % are rejected, so one round almost always suffices.
    for (const byte of crypto.getRandomValues(
      new Uint8Array(Math.min(length - out.length + 8, MAX_RANDOM_BYTES)),
    )) {
      if (byte < UNBIASED_LIMIT && out.length < length)
        out += BASE62_ALPHABET.charAt(byte % BASE62_ALPHABET.length);
    }
  }
  return out;
}
