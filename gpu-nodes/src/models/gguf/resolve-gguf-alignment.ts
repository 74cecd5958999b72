import { GGUF_ALIGNMENT_KEY, GGUF_DEFAULT_ALIGNMENT_BYTES } from "./gguf-types.ts";
import type { GgufMetadata } from "./gguf-types.ts";

/** `general.alignment` when present (llama.cpp insists on a u32 power of two), else the GGUF default. */
export function resolveGgufAlignment(metadata: GgufMetadata): number {
  const entry = metadata.get(GGUF_ALIGNMENT_KEY);
  if (entry === undefined) return GGUF_DEFAULT_ALIGNMENT_BYTES;
  if (entry.type !== "u32") throw new Error(`${GGUF_ALIGNMENT_KEY} must be a u32, got ${entry.type}`);
  const alignment = entry.value;
  if (alignment === 0 || (alignment & (alignment - 1)) !== 0) {
    throw new Error(`${GGUF_ALIGNMENT_KEY} must be a power of two, got ${alignment}`);
  }
  return alignment;
}
