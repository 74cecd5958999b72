import { generateBase62 } from "../lib/generate-base62.ts";
import { sha256Hex } from "../lib/sha256-hex.ts";
import { API_KEY_FORMAT } from "./api-key-format.ts";
import type { ApiKeyScope } from "./api-key-scope.ts";
import type { ApiKeyRecord } from "./tenant-store.ts";

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
