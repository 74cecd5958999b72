import type { GgufArrayValue, GgufMetadata, GgufScalarJsTypes, GgufScalarKind } from "./gguf-types.ts";

/** Numeric metadata as a JS number, whatever integer or float width the file chose. */
export function getGgufNumber(metadata: GgufMetadata, key: string): number {
  const entry = metadata.get(key);
  if (entry === undefined) throw new Error(`GGUF metadata ${key} is missing`);
  if (entry.type === "array" || entry.type === "string" || entry.type === "bool") {
    throw new Error(`GGUF metadata ${key} is a ${entry.type}, not a number`);
  }
  return Number(entry.value);
}

export function getGgufString(metadata: GgufMetadata, key: string): string {
  const entry = metadata.get(key);
  if (entry?.type !== "string") throw new Error(`GGUF metadata ${key} is not a string`);
  return entry.value;
}

export function getGgufArray<K extends GgufScalarKind>(
  metadata: GgufMetadata,
  key: string,
  itemType: K,
): readonly GgufScalarJsTypes[K][] {
  const entry: GgufArrayValue | undefined = findArray(metadata, key);
  if (entry?.itemType !== itemType) throw new Error(`GGUF metadata ${key} is not an array of ${itemType}`);
  // itemType was just checked, so the values have that item type.
  return entry.values as readonly GgufScalarJsTypes[K][];
}

function findArray(metadata: GgufMetadata, key: string): GgufArrayValue | undefined {
  const entry = metadata.get(key);
  return entry?.type === "array" ? entry : undefined;
}
