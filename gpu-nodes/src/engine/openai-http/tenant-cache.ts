/**
 * Keeps one tenant's cached prompt blocks away from another's on the engine servers.
 *
 * vLLM shares its prefix cache across requests; a request's `cache_salt` is mixed into the hash of its first
 * block, so requests with different salts never share a cached block (`/v1/completions` reads it since vLLM 0.10,
 * vllm-project/vllm#20981; 0.9 read it on chat completions only). The salt is a digest of a node-side secret and
 * the tenant id: the server (its logs, its metrics) never learns the tenant id, and nobody without the secret can
 * compute another tenant's salt.
 *
 * llama-server has no salt: its slots reuse KV by prefix match, whoever sent the earlier request. The tenant is
 * part of the slot choice (see {@link pickSlot}), so equal conversation ids of two tenants do not land on one slot
 * by design; but any two conversations still share a slot one time in n (n slots), whatever their tenants. It
 * isolates nothing: only vLLM's salt does.
 */

/** The salt of a request that names no tenant: never no salt, so it shares blocks with no tenant's requests. */
export const UNTENANTED_CACHE_SALT = "mol-untenanted";

/** Salts remembered per process; past this many tenants the memo starts over (a salt is cheap to recompute). */
const MAX_REMEMBERED_SALTS = 4096;

/**
 * The secret when MOL_CACHE_SALT_SECRET is unset: derived from the engine URL and the served model, so it is
 * stable across node restarts (vLLM outlives a node and keeps its cache, and a per-process secret would turn every
 * restart into cold caches for every tenant) and equal on every node fronting the same server (a tenant's
 * conversation moving between nodes keeps its cache). The trade-off: anyone who knows the URL, the model and a
 * tenant id can compute that tenant's salt. Salts never leave the node and the engine, so that needs access to
 * the engine's traffic or logs; set MOL_CACHE_SALT_SECRET (the same on every node of one server) to close it.
 * Nodes that spell the URL differently get different salts: that costs cache hits across them, never isolation.
 */
export function defaultCacheSaltSecret(baseUrl: string, baseModel: string): string {
  return `molmesh-cache-salt\n${baseUrl.replace(/\/+$/, "")}\n${baseModel}`;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Computes a tenant's `cache_salt`: base64url(SHA-256(secret, tenant id)), memoised per tenant. */
export function createCacheSalter(secret: string): (tenantId: string | undefined) => Promise<string> {
  const salts = new Map<string, string>();
  return async (tenantId) => {
    if (tenantId === undefined) return UNTENANTED_CACHE_SALT;
    const known = salts.get(tenantId);
    if (known !== undefined) return known;
    // JSON keeps the two parts apart: no secret/tenant split can collide with another.
    const input = new TextEncoder().encode(JSON.stringify([secret, tenantId]));
    const salt = toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", input)));
    if (salts.size >= MAX_REMEMBERED_SALTS) salts.clear();
    salts.set(tenantId, salt);
    return salt;
  };
}

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a over the UTF-8 bytes: stable across processes and machines, unlike any built-in hash. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash;
}

/** Whose conversation, on which adapter: what a llama-server slot is chosen by. */
export interface SlotChoice {
  tenantId: string | undefined;
  /** The request's KV slot key (its `slotKey`, the engine request's `conversationId`). */
  slotKey: string;
  /** The adapter label: one conversation's hops on one adapter share a slot and so its KV prefix. */
  label: string;
}

/**
 * The llama-server slot (`id_slot`) for a request, out of `slots`: the same for every hop of one conversation
 * on one adapter, spread evenly otherwise. The tenant is part of the key (see the file comment).
 */
export function pickSlot(choice: SlotChoice, slots: number): number {
  const tenant = choice.tenantId ?? UNTENANTED_CACHE_SALT;
  return fnv1a32(`${tenant}\n${choice.slotKey}\n${choice.label}`) % slots;
}
