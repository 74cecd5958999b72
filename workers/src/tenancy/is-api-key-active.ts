import type { ApiKeyRecord } from "./tenant-store.ts";

/** Not revoked yet at `nowSeconds` (a rotation's grace period sets `revokedAt` in the future). */
export function isApiKeyActive(key: Pick<ApiKeyRecord, "revokedAt">, nowSeconds: number): boolean {
  return key.revokedAt === null || key.revokedAt > nowSeconds;
}
