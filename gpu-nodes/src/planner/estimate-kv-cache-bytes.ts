import { getGgufNumber, getGgufString, type GgufMetadata } from "../models/gguf/types.ts";

export interface KvCacheShape {
  layers: number;
  kvHeads: number;
  keyLength: number;
  valueLength: number;
  /** The model's trained context, the default slot size. */
  context: number;
}

/** llama.cpp's default cache type is f16. */
export const DEFAULT_KV_BYTES_PER_VALUE = 2;

/** Every layer keeps a key and a value vector per KV head for each token of the slot. */
export function estimateKvCacheBytes(
  shape: KvCacheShape,
  context: number = shape.context,
  bytesPerValue: number = DEFAULT_KV_BYTES_PER_VALUE,
): number {
  return shape.layers * context * shape.kvHeads * (shape.keyLength + shape.valueLength) * bytesPerValue;
}

/** The attention shape from a base model's GGUF metadata; undefined for adapters and incomplete headers. */
export function readKvCacheShape(metadata: GgufMetadata): KvCacheShape | undefined {
  if (!metadata.has("general.architecture")) return undefined;
  const arch = getGgufString(metadata, "general.architecture");
  const read = (key: string): number | undefined =>
    metadata.has(`${arch}.${key}`) ? getGgufNumber(metadata, `${arch}.${key}`) : undefined;
  const layers = read("block_count");
  const context = read("context_length");
  const embedding = read("embedding_length");
  const heads = read("attention.head_count");
  if (layers === undefined || context === undefined || embedding === undefined || heads === undefined) {
    return undefined;
  }
  const headLength = embedding / heads;
  return {
    layers,
    kvHeads: read("attention.head_count_kv") ?? heads,
    keyLength: read("attention.key_length") ?? headLength,
    valueLength: read("attention.value_length") ?? headLength,
    context,
  };
}
