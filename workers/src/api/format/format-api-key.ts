import { API_KEY_FORMAT } from "../../tenancy/api-key-format.ts";
import type { ApiKeyScope } from "../../tenancy/api-key-scope.ts";
import type { ApiKeyRecord } from "../../tenancy/tenant-store.ts";

export interface ApiKeyObject {
  id: string;
  object: "api_key";
  tenant_id: string;
  name: string | null;
  /** `sk-mol-<public prefix>`: enough to recognise the key, nothing to use it with; null for the dev key. */
  prefix: string | null;
  last4: string;
  scopes: ApiKeyScope[];
  created_at: number;
  /** When the key is (or will be, during a rotation's grace period) refused. */
  revoked_at: number | null;
  rotated_from: string | null;
  /** Only in the answer that created the key. */
  key?: string;
}

const PUBLIC_PREFIX = new RegExp(`^[0-9A-Za-z]{${API_KEY_FORMAT.prefixLength}}$`);

/** Never the hash: pass `key` only when answering the request that created it. */
export function formatApiKey(record: ApiKeyRecord, key?: string): ApiKeyObject {
  return {
    id: record.id,
    object: "api_key",
    tenant_id: record.tenantId,
    name: record.name,
    prefix: PUBLIC_PREFIX.test(record.prefix) ? `${API_KEY_FORMAT.tag}${record.prefix}` : null,
    last4: record.last4,
    scopes: record.scopes,
    created_at: record.createdAt,
    revoked_at: record.revokedAt,
    rotated_from: record.rotatedFrom,
    ...(key === undefined ? {} : { key }),
  };
}
