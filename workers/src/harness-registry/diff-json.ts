/**
 * An RFC 6902 JSON Patch from one JSON value to another: `add`, `remove` and `replace` at RFC 6901 pointers.
 *
 * Written here because no maintained JSON Patch library is installed in this repository yet; `compare` of
 * `fast-json-patch` produces the same kind of patch and can replace this file (the registry only needs a
 * `(from, to) => operations` function). Objects are compared key by key (keys in sorted order, so a patch is
 * deterministic); arrays index by index, then the tail is added or removed (removals from the end, so every
 * index is valid when its operation applies). Applying the patch to `from` gives `to`.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonPatchOperation =
  | { op: "add"; path: string; value: JsonValue }
  | { op: "remove"; path: string }
  | { op: "replace"; path: string; value: JsonValue };

/** One reference token of a JSON Pointer: `~` as `~0`, `/` as `~1` (RFC 6901 §3). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function diffJson(from: JsonValue, to: JsonValue): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  diffAt(from, to, "", operations);
  return operations;
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function diffAt(from: JsonValue, to: JsonValue, path: string, out: JsonPatchOperation[]): void {
  if (Array.isArray(from) && Array.isArray(to)) {
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i++) diffAt(from[i] as JsonValue, to[i] as JsonValue, `${path}/${i}`, out);
    for (let i = from.length - 1; i >= common; i--) out.push({ op: "remove", path: `${path}/${i}` });
    for (let i = common; i < to.length; i++)
      out.push({ op: "add", path: `${path}/${i}`, value: to[i] as JsonValue });
    return;
  }
  if (isObject(from) && isObject(to)) {
    for (const key of Object.keys(from).sort()) {
      const at = `${path}/${escapePointerToken(key)}`;
      if (!Object.hasOwn(to, key)) out.push({ op: "remove", path: at });
      else diffAt(from[key] as JsonValue, to[key] as JsonValue, at, out);
    }
    for (const key of Object.keys(to).sort()) {
      if (!Object.hasOwn(from, key))
        out.push({ op: "add", path: `${path}/${escapePointerToken(key)}`, value: to[key] as JsonValue });
    }
    return;
  }
  // Here at least one side is a scalar: equal only when they are the same scalar.
  if (from !== to) out.push({ op: "replace", path, value: to });
}
