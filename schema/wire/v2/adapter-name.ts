import { z } from "zod";
import { adapterIdSchema, type AdapterId } from "./adapter-id.ts";

/** Hex digits of an adapter revision in its served name (`label@<rev>`): 48 bits, as git's short ids grow to. */
export const ADAPTER_REV_HEX = 12;

/**
 * A versioned adapter name: `label` or `label@<rev>`, where `rev` is hex from the revision's content hash. A name
 * is never reloaded with other weights (an HTTP engine's prefix cache keys on it: an in-place reload would serve
 * stale KV), so every KV slot, heartbeat entry and placement decision keys on the versioned name. A bare `label`
 * asks for whatever revision of that label the node serves by default.
 */
export const adapterNameSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]{0,31}(@[0-9a-f]{8,64})?$/,
    "adapter names are a label (1-32 chars of [a-z0-9_-], starting with a letter), optionally @ and 8-64 hex digits",
  );
export type AdapterName = z.infer<typeof adapterNameSchema>;

export interface ParsedAdapterName {
  label: AdapterId;
  /** Hex digits of the revision; absent for a bare label. */
  rev?: string;
}

export function parseAdapterName(name: string): ParsedAdapterName {
  const at = name.indexOf("@");
  const label = adapterIdSchema.parse(at < 0 ? name : name.slice(0, at));
  return at < 0 ? { label } : { label, rev: name.slice(at + 1) };
}

/** The hex digits of a revision id (`sha256:<hex>` or bare hex), cut to {@link ADAPTER_REV_HEX}. */
export function revisionHex(revision: string): string {
  const hex = revision.slice(revision.indexOf(":") + 1).toLowerCase();
  if (!/^[0-9a-f]{8,}$/.test(hex)) throw new TypeError(`revision "${revision}" has no hex digest`);
  return hex.slice(0, ADAPTER_REV_HEX);
}

/** `chat` + `sha256:0123456789abcdef…` → `chat@0123456789ab`. */
export function formatAdapterName(label: AdapterId, revision: string): AdapterName {
  return `${label}@${revisionHex(revision)}`;
}

/**
 * Whether a request for `requested` may be served by the adapter named `served`: the same name, or a bare label
 * and a revision of that label (the node's default for it decides which, see the engine).
 */
export function adapterNameMatches(requested: string, served: string): boolean {
  if (requested === served) return true;
  const want = parseAdapterName(requested);
  const have = parseAdapterName(served);
  if (want.label !== have.label) return false;
  if (want.rev === undefined) return true;
  return have.rev !== undefined && (have.rev.startsWith(want.rev) || want.rev.startsWith(have.rev));
}
