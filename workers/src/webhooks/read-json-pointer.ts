/** An RFC 6901 JSON pointer: empty (the whole document) or `/`-separated tokens where `~` only escapes. */
export const JSON_POINTER = /^(\/([^~/]|~[01])*)*$/;

export function isJsonPointer(pointer: string): boolean {
  return JSON_POINTER.test(pointer);
}

/** Resolves an RFC 6901 JSON pointer (`/event/thread_ts`, `~1` for `/`, `~0` for `~`); undefined when absent. */
export function readJsonPointer(document: unknown, pointer: string): unknown {
  if (!isJsonPointer(pointer)) return undefined;
  if (pointer === "") return document;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (current !== null && typeof current === "object" && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return current;
}
