import { canonicalizeJson } from "./canonicalize-json.ts";
import type { HarnessDocument } from "./harness-settings.ts";

/**
 * Content hash of a harness: SHA-256 of its canonical JSON, as `sha256:<hex>`. Each turn records the hash
 * it ran under. WebCrypto, so it runs the same in Node and in workerd.
 */
export async function hashHarness(doc: HarnessDocument): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalizeJson(doc));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}
