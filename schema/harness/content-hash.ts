import type { HarnessDocument } from "./harness-settings.ts";

/**
 * Content hashes, through WebCrypto so they run the same in Node and in workerd: the harness hash each turn
 * records, request-body hashes for Idempotency-Key comparisons, API key digests, webhook signatures.
 */

/** Lower-case hex, the spelling SHA-256 digests are stored in and GitHub and Slack use for their signatures. */
export function encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Hex SHA-256 of a string's UTF-8 bytes. */
export async function sha256Hex(text: string): Promise<string> {
  return encodeHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/**
 * JSON with object keys sorted recursively (UTF-16 code unit order) and no whitespace, so equal documents
 * serialise to equal bytes whatever order their keys were written in. Arrays keep their order: it means
 * something (the route labels, the stop strings).
 */
export function canonicalizeJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? "null" : canonicalizeJson(item))).join(",")}]`;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalizeJson(record[key])}`);
    return `{${fields.join(",")}}`;
  }
  const text = JSON.stringify(value);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- lib.d.ts says string; undefined, functions and symbols give undefined
  if (text === undefined) throw new TypeError(`not JSON-serialisable: ${typeof value}`);
  return text;
}

/** Content hash of a harness: SHA-256 of its canonical JSON, as `sha256:<hex>`. Each turn records the hash it ran under. */
export async function hashHarness(doc: HarnessDocument): Promise<string> {
  return `sha256:${await sha256Hex(canonicalizeJson(doc))}`;
}

/** Compares secrets without an early exit, so response time does not reveal how much of a key matched. */
export function timingSafeEqualText(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  return diff === 0;
}
