import { compare } from "fast-json-patch";
import { canonicalizeJson } from "../../../schema/harness/content-hash.ts";

/**
 * The RFC 6902 JSON Patch from one harness document to another, by `fast-json-patch`'s `compare`: `add`, `remove`
 * and `replace` at RFC 6901 pointers, arrays index by index. Both sides are put in canonical key order first, so the
 * patch between two versions is the same however they were stored or parsed. Applying it to `from` gives `to`.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonPatchOperation =
  | { op: "add"; path: string; value: JsonValue }
  | { op: "remove"; path: string }
  | { op: "replace"; path: string; value: JsonValue };

export function diffJson(from: JsonValue, to: JsonValue): JsonPatchOperation[] {
  // Without `invertible`, compare emits only add, remove and replace; it reads both values and changes neither.
  const canonical = (value: JsonValue) => JSON.parse(canonicalizeJson(value)) as object;
  return compare(canonical(from), canonical(to)) as JsonPatchOperation[];
}
