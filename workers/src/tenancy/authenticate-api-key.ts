import { sha256Hex, timingSafeEqualText } from "../../../schema/harness/content-hash.ts";
import { isApiKeyActive, parseApiKey, readLookupPrefix } from "./api-key-format.ts";
import { API_KEY_SCOPES, type Principal } from "./api-key-scope.ts";
import type { TenantStore } from "./tenant-store.ts";

/** The local mesh's tenant: the id the one dev key used before tenancy, so existing local state stays reachable. */
export const DEV_TENANT_ID = "dev";
const DEV_KEY_ID_PREFIX = "key_dev_";

export interface AuthenticateOptions {
  store: TenantStore;
  /** MOL_DEV_API_KEY: when set, this exact string is a full-scope key of the `dev` tenant. */
  devApiKey?: string | undefined;
  /** Unix ms. */
  now: number;
}

/**
 * The principal of a bearer key, or undefined: unknown, revoked (or past a rotation's grace period), of a
 * suspended tenant, or a dev key that MOL_DEV_API_KEY no longer names. Hashes are compared in constant time.
 */
export async function authenticateApiKey(
  apiKey: string,
  options: AuthenticateOptions,
): Promise<Principal | undefined> {
  const secretHash = await sha256Hex(apiKey);
  // Digests have one length, so the comparison reveals neither the dev key's length nor how much of it matched.
  const isDevKey =
    options.devApiKey !== undefined &&
    options.devApiKey !== "" &&
    timingSafeEqualText(secretHash, await hashDevKey(options.devApiKey));
  // Only issued keys and the dev key are ever stored: anything else is refused without a read.
  if (!isDevKey && parseApiKey(apiKey) === undefined) return undefined;
  const prefix = readLookupPrefix(apiKey, secretHash);
  let found = await options.store.findApiKeyByPrefix(prefix);
  if (!found && isDevKey) {
    await bootstrapDevKey(options.store, apiKey, { prefix, secretHash, now: options.now });
    found = await options.store.findApiKeyByPrefix(prefix);
  }
  if (!found || !timingSafeEqualText(found.key.secretHash, secretHash)) return undefined;
  // A bootstrapped dev key lives only while the var names it: changing or unsetting MOL_DEV_API_KEY retires it.
  if (found.key.id.startsWith(DEV_KEY_ID_PREFIX) && !isDevKey) return undefined;
  if (!isApiKeyActive(found.key, Math.floor(options.now / 1000))) return undefined;
  if (found.tenantStatus !== "active") return undefined;
  return { tenantId: found.key.tenantId, keyId: found.key.id, scopes: found.key.scopes };
}

/** The dev key's digest, kept for the isolate: the key is a deployment var, the same on every request. */
let devKeyDigest: { key: string; digest: Promise<string> } | undefined;

function hashDevKey(devApiKey: string): Promise<string> {
  if (devKeyDigest?.key !== devApiKey) devKeyDigest = { key: devApiKey, digest: sha256Hex(devApiKey) };
  return devKeyDigest.digest;
}

/**
 * Stores the dev tenant and key on the first request that presents the dev key, so `npm start` needs no setup.
 * Idempotent: a revoked dev key stays revoked, since the key row already exists.
 */
async function bootstrapDevKey(
  store: TenantStore,
  apiKey: string,
  key: { prefix: string; secretHash: string; now: number },
): Promise<void> {
  const createdAt = Math.floor(key.now / 1000);
  const keyId = `${DEV_KEY_ID_PREFIX}${key.secretHash.slice(0, 16)}`;
  const audit = { tenantId: DEV_TENANT_ID, actor: "system", createdAt };
  await store.ensureTenantKey(
    { id: DEV_TENANT_ID, name: "dev", createdAt, status: "active" },
    {
      id: keyId,
      tenantId: DEV_TENANT_ID,
      name: "MOL_DEV_API_KEY",
      prefix: key.prefix,
      secretHash: key.secretHash,
      last4: apiKey.slice(-4),
      scopes: [...API_KEY_SCOPES],
      createdAt,
      revokedAt: null,
      rotatedFrom: null,
    },
    {
      tenant: { ...audit, action: "tenant.created", target: DEV_TENANT_ID, details: { name: "dev" } },
      key: {
        ...audit,
        action: "api_key.created",
        target: keyId,
        details: { name: "MOL_DEV_API_KEY", scopes: [...API_KEY_SCOPES] },
      },
    },
  );
}
