import { canonicalizeJson } from "../../../schema/harness/content-hash.ts";

/** SHA-256 of a request body in canonical JSON, for Idempotency-Key comparisons. */
export async function hashRequestBody(body: unknown): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalizeJson(body)));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
