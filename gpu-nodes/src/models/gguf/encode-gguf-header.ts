import { alignOffset } from "./align-offset.ts";
import { ByteWriter } from "./byte-writer.ts";
import { encodeGgufValue } from "./encode-gguf-value.ts";
import { GGUF_MAGIC, GGUF_VERSION } from "./gguf-types.ts";
import type { GgufMetadata, GgufTensorInfo } from "./gguf-types.ts";

/** Everything before the tensor data section, zero-padded so the data starts aligned. */
export function encodeGgufHeader(
  metadata: GgufMetadata,
  tensors: readonly GgufTensorInfo[],
  alignment: number,
): Uint8Array {
  const out = new ByteWriter();
  out.bytes(new TextEncoder().encode(GGUF_MAGIC));
  out.u32(GGUF_VERSION);
  out.u64(tensors.length);
  out.u64(metadata.size);
  for (const [key, value] of metadata) {
    out.string(key);
    encodeGgufValue(out, value);
  }
  for (const tensor of tensors) {
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(dim);
    out.u32(tensor.type);
    out.u64(tensor.offset);
  }
  out.zeros(alignOffset(out.byteLength, alignment) - out.byteLength);
  return out.toBytes();
}
