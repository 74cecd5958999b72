import { compare } from "fast-json-patch";

/**
 * The RFC 6902 JSON Patch from one harness document to another, by `fast-json-patch`'s `compare`: `add`, `remove`
 * and `replace` at RFC 6901 pointers, arrays index by index. Stored documents are canonical JSON (keys sorted), so
 * the patch between two versions is the same whichever isolate computes it. Applying it to `from` gives `to`.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonPatchOperation =
  | { op: "add"; path: string; value: JsonValue }
  | { op: "remove"; path: string }
  | { op: "replace"; path: string; value: JsonValue };

export function diffJson(from: JsonValue, to: JsonValue): JsonPatchOperation[] {
  // Without `invertible`, compare emits only add, remove and replace; it reads both values and changes neither.
  return compare(from as object, to as object) as JsonPatchOperation[];
}
