/** Bytes per element of each safetensors dtype (the format's own list; sub-byte types are not in it). */
const BYTES_BY_DTYPE: ReadonlyMap<string, number> = new Map([
  ["F64", 8],
  ["I64", 8],
  ["U64", 8],
  ["F32", 4],
  ["I32", 4],
  ["U32", 4],
  ["F16", 2],
  ["BF16", 2],
  ["I16", 2],
  ["U16", 2],
  ["F8_E4M3", 1],
  ["F8_E5M2", 1],
  ["F8_E8M0", 1],
  ["I8", 1],
  ["U8", 1],
  ["BOOL", 1],
]);

export function getSafetensorsDtypeBytes(dtype: string): number {
  const bytes = BYTES_BY_DTYPE.get(dtype);
  if (bytes === undefined) throw new Error(`unknown safetensors dtype ${dtype}`);
  return bytes;
}
