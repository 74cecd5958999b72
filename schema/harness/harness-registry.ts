import { z } from "zod";
import { canonicalizeJson, sha256Hex } from "./content-hash.ts";
import { harnessDocumentSchema, type HarnessDocument } from "./harness-document.ts";
import { countUtf8Bytes } from "./utf8.ts";

/**
 * The harness registry's contract: what a stored version is (a whole, strict harness document, addressed by the
 * `sha256:` of its canonical JSON), what names a label, and how a label's canary splits conversations.
 */

/** Largest harness document the registry stores: UTF-8 bytes of its canonical JSON. */
export const MAX_HARNESS_DOCUMENT_BYTES = 256 * 1024;

/** A version's address: `sha256:` and 64 lower-case hex digits (see `hashHarness`). */
export const HARNESS_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;
export const harnessHashSchema = z
  .string()
  .regex(HARNESS_HASH_PATTERN, "expected a harness hash: sha256: and 64 lower-case hex digits");

/** A label: 1–64 of [a-z0-9._-], starting with a letter or digit (never `:`, so it never reads as a hash). */
export const HARNESS_LABEL_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const harnessLabelNameSchema = z
  .string()
  .regex(
    HARNESS_LABEL_PATTERN,
    "expected a label name: 1-64 of [a-z0-9._-], starting with a letter or digit",
  );

/** The label a tenant's turns run under. */
export const PRODUCTION_LABEL = "production";

/** A harness document as the registry checks it, before it is stored. */
export type ParsedHarnessDocument =
  | { ok: true; document: HarnessDocument; canonical: string; hash: string; bytes: number }
  | { ok: false; error: "too_large"; bytes: number }
  | { ok: false; error: "invalid"; issues: z.core.$ZodIssue[] };

/** UTF-8 bytes of a value's canonical JSON: what the registry's cap counts. */
export function measureCanonicalBytes(value: unknown): number {
  return countUtf8Bytes(canonicalizeJson(value));
}

/** A valid document's canonical JSON, its size and its address (the hash `hashHarness` gives it, and a turn under it records). */
export async function addressHarnessDocument(
  document: HarnessDocument,
): Promise<{ canonical: string; hash: string; bytes: number }> {
  const canonical = canonicalizeJson(document);
  return { canonical, hash: `sha256:${await sha256Hex(canonical)}`, bytes: countUtf8Bytes(canonical) };
}

/**
 * Checks a document for the registry: its canonical JSON within {@link MAX_HARNESS_DOCUMENT_BYTES} (counted before
 * anything else, so an oversize document costs no validation), then the strict schema (an unknown key anywhere is
 * an `unrecognized_keys` issue naming it) and the cross-field checks. The hash is over the parsed document,
 * defaults filled in.
 */
export async function parseHarnessDocument(value: unknown): Promise<ParsedHarnessDocument> {
  const inputBytes = measureCanonicalBytes(value);
  if (inputBytes > MAX_HARNESS_DOCUMENT_BYTES) return { ok: false, error: "too_large", bytes: inputBytes };
  const parsed = harnessDocumentSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: "invalid", issues: parsed.error.issues };
  const address = await addressHarnessDocument(parsed.data);
  // Defaults add a few short fields at most; checked again so what is stored keeps the bound.
  if (address.bytes > MAX_HARNESS_DOCUMENT_BYTES)
    return { ok: false, error: "too_large", bytes: address.bytes };
  return { ok: true, document: parsed.data, ...address };
}

/** Which version of a label a conversation runs under. */
export type HarnessArm = "production" | "canary";

/** Buckets a canary's percent is counted in: a percent is 100 of them. */
const CANARY_BUCKETS = 10_000;

/**
 * The conversation's bucket, 0 ≤ b < 10,000: from SHA-256 of (tenant, conversation), so it is the same on every
 * isolate and every turn, and independent of the label and its versions.
 */
export async function readCanaryBucket(tenantId: string, conversationKey: string): Promise<number> {
  const hex = await sha256Hex(`molmesh.harness.canary\n${tenantId}\n${conversationKey}`);
  return Number.parseInt(hex.slice(0, 12), 16) % CANARY_BUCKETS;
}

/**
 * The arm of a conversation under a canary of `percent` (0–100, fractions allowed): the canary takes the
 * conversations whose bucket is below `percent`% of the buckets. Sticky: a conversation keeps its arm while the
 * split is unchanged, and raising the percent only moves conversations from production to the canary.
 */
export function pickCanaryArm(bucket: number, percent: number): HarnessArm {
  return bucket < (percent / 100) * CANARY_BUCKETS ? "canary" : "production";
}
