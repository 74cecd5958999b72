import { alignOffset } from "./align-offset.ts";
import { encodeGgufHeader } from "./encode-gguf-header.ts";
import { GGUF_VERSION } from "./gguf-types.ts";
import type { GgufHeader, GgufMetadata, GgufTensorInfo } from "./gguf-types.ts";
import { measureTensorBytes } from "./measure-gguf-tensors.ts";
import type { TensorShape } from "./measure-gguf-tensors.ts";
import { resolveGgufAlignment } from "./resolve-gguf-alignment.ts";

export interface GgufTensorInput extends TensorShape {
  /**
   * Produces the tensor's little-endian payload when the writer reaches it, so only one tensor (or one
   * chunk of it) is in memory at a time.
   */
  data: () => Uint8Array | Iterable<Uint8Array>;
}

export interface GgufWriteInput {
  metadata: GgufMetadata;
  tensors: readonly GgufTensorInput[];
}

/** Receives the file's bytes in order; awaiting a returned promise gives back-pressure. */
export interface GgufSink {
  write(chunk: Uint8Array): void | Promise<void>;
}

export interface GgufWriteResult {
  header: GgufHeader;
  bytesWritten: number;
}

/** Tensor offsets follow llama.cpp's rule: each tensor starts where the previous one's padded size ends. */
export function planGgufLayout(input: GgufWriteInput): { header: GgufHeader; headerBytes: Uint8Array } {
  const alignment = resolveGgufAlignment(input.metadata);
  let offset = 0;
  const tensors: GgufTensorInfo[] = input.tensors.map((tensor) => {
    const info = { name: tensor.name, dims: [...tensor.dims], type: tensor.type, offset };
    offset += alignOffset(measureTensorBytes(tensor), alignment);
    return info;
  });
  const headerBytes = encodeGgufHeader(input.metadata, tensors, alignment);
  const header = {
    version: GGUF_VERSION,
    metadata: input.metadata,
    tensors,
    alignment,
    dataOffset: headerBytes.length,
  };
  return { header, headerBytes };
}

export async function writeGguf(input: GgufWriteInput, sink: GgufSink): Promise<GgufWriteResult> {
  assertUniqueTensorNames(input.tensors);
  const { header, headerBytes } = planGgufLayout(input);
  await sink.write(headerBytes);
  let bytesWritten = headerBytes.length;
  for (const tensor of input.tensors) {
    const expectedBytes = measureTensorBytes(tensor);
    let tensorBytes = 0;
    for (const chunk of toChunks(tensor.data())) {
      tensorBytes += chunk.length;
      if (tensorBytes > expectedBytes) break;
      await sink.write(chunk);
    }
    if (tensorBytes !== expectedBytes) {
      throw new Error(`tensor ${tensor.name}: data has ${tensorBytes} bytes, shape needs ${expectedBytes}`);
    }
    const padding = alignOffset(tensorBytes, header.alignment) - tensorBytes;
    if (padding > 0) await sink.write(new Uint8Array(padding));
    bytesWritten += tensorBytes + padding;
  }
  return { header, bytesWritten };
}

function toChunks(data: Uint8Array | Iterable<Uint8Array>): Iterable<Uint8Array> {
  return data instanceof Uint8Array ? [data] : data;
}

function assertUniqueTensorNames(tensors: readonly TensorShape[]): void {
  const seen = new Set<string>();
  for (const { name } of tensors) {
    if (seen.has(name)) throw new Error(`duplicate tensor name ${name}`);
    seen.add(name);
  }
}
