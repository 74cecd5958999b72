import { parseApiKey } from "./api-key-format.ts";

/**
 * The `prefix` a key is stored and looked up under: the public prefix of a key we issued; for any other string
 * (only the local mesh's MOL_DEV_API_KEY is stored that way) the start of its hash, which reveals nothing of it.
 */
export function readLookupPrefix(apiKey: string, secretHash: string): string {
  return parseApiKey(apiKey)?.prefix ?? `sha256:${secretHash.slice(0, 16)}`;
}
