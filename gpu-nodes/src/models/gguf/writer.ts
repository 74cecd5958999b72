import { randomUUID } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import {
  GGUF_MAGIC,
  GGUF_VALUE_TYPE,
  GGUF_VERSION,
  alignOffset,
  measureTensorBytes,
  resolveGgufAlignment,
  type GgufHeader,
  type GgufMetadata,
  type GgufScalarJsTypes,
  type GgufScalarKind,
  type GgufTensorInfo,
  type GgufValue,
  type TensorShape,
} from "./types.ts";

/**
 * Our own GGUF writer: there is no maintained JS one, and the test models and LoRA fixtures need exact,
 * reproducible bytes. It streams, so a tensor is produced only when the writer reaches it.
 */

const INITIAL_CAPACITY_BYTES = 4096;

const utf8 = new TextEncoder();

/**
 * Little-endian growable buffer for GGUF header fields. `reserve` may swap the buffer, so callers must
 * call it before touching `this.buffer` or `this.view`.
 */
export class ByteWriter {
  private buffer = new Uint8Array(INITIAL_CAPACITY_BYTES);
  private view = new DataView(this.buffer.buffer);
  private length = 0;

  get byteLength(): number {
    return this.length;
  }

  u8(value: number): void {
    const at = this.reserve(1);
    this.view.setUint8(at, value);
  }
  i8(value: number): void {
    const at = this.reserve(1);
    this.view.setInt8(at, value);
  }
  u16(value: number): void {
    const at = this.reserve(2);
    this.view.setUint16(at, value, true);
  }
  i16(value: number): void {
    const at = this.reserve(2);
    this.view.setInt16(at, value, true);
  }
  u32(value: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, value, true);
  }
  i32(value: number): void {
    const at = this.reserve(4);
    this.view.setInt32(at, value, true);
  }
  f32(value: number): void {
    const at = this.reserve(4);
    this.view.setFloat32(at, value, true);
  }
  f64(value: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, value, true);
  }
  u64(value: bigint | number): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, BigInt(value), true);
  }
  i64(value: bigint): void {
    const at = this.reserve(8);
    this.view.setBigInt64(at, value, true);
  }
  bool(value: boolean): void {
    this.u8(value ? 1 : 0);
  }

  /** GGUF string: u64 byte length, then UTF-8 bytes without terminator. */
  string(value: string): void {
    const bytes = utf8.encode(value);
    this.u64(bytes.length);
    this.bytes(bytes);
  }

  bytes(value: Uint8Array): void {
    const start = this.reserve(value.length);
    this.buffer.set(value, start);
  }

  zeros(count: number): void {
    const start = this.reserve(count);
    this.buffer.fill(0, start, start + count);
  }

  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }

  private reserve(count: number): number {
    const start = this.length;
    const needed = start + count;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, start));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    }
    this.length = needed;
    return start;
  }
}

type ScalarEncoders = { [K in GgufScalarKind]: (out: ByteWriter, value: GgufScalarJsTypes[K]) => void };

const SCALAR_ENCODERS: ScalarEncoders = {
  u8: (out, v) => out.u8(v),
  i8: (out, v) => out.i8(v),
  u16: (out, v) => out.u16(v),
  i16: (out, v) => out.i16(v),
  u32: (out, v) => out.u32(v),
  i32: (out, v) => out.i32(v),
  f32: (out, v) => out.f32(v),
  bool: (out, v) => out.bool(v),
  string: (out, v) => out.string(v),
  u64: (out, v) => out.u64(v),
  i64: (out, v) => out.i64(v),
  f64: (out, v) => out.f64(v),
};

/** Writes the value's type id, then its payload (arrays: item type, u64 count, items). */
export function encodeGgufValue(out: ByteWriter, value: GgufValue): void {
  out.u32(GGUF_VALUE_TYPE[value.type]);
  if (value.type !== "array") {
    encodeScalar(out, value.type, value.value);
    return;
  }
  out.u32(GGUF_VALUE_TYPE[value.itemType]);
  out.u64(value.values.length);
  // TypeScript cannot correlate itemType with values across the union; GgufArrayValue guarantees it.
  const encode = SCALAR_ENCODERS[value.itemType] as (out: ByteWriter, v: unknown) => void;
  for (const item of value.values) encode(out, item);
}

function encodeScalar<K extends GgufScalarKind>(out: ByteWriter, kind: K, value: GgufScalarJsTypes[K]): void {
  const encode: ScalarEncoders[K] = SCALAR_ENCODERS[kind];
  encode(out, value);
}

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

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE 754 binary16 bits of `value`, rounded to nearest-even like ggml_fp32_to_fp16. */
export function encodeFloat16(value: number): number {
  f32Scratch[0] = value;
  const bits = u32Scratch[0] ?? 0;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa === 0 ? 0 : 0x200);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    return sign | roundShift(mantissa | 0x800000, 14 - halfExponent);
  }
  // A rounding carry may ripple into the exponent; that is the correct result (up to infinity).
  return sign | ((halfExponent << 10) + roundShift(mantissa, 13));
}

function roundShift(value: number, shift: number): number {
  const kept = value >>> shift;
  const remainder = value & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  const roundUp = remainder > halfway || (remainder === halfway && (kept & 1) === 1);
  return roundUp ? kept + 1 : kept;
}

const IS_LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** GGUF payloads are little-endian; on such hosts the array's own bytes are reused without copying. */
export function encodeF32Tensor(values: Float32Array): Uint8Array {
  if (IS_LITTLE_ENDIAN_HOST) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return out;
}

export function encodeF16Tensor(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => view.setUint16(i * 2, encodeFloat16(value), true));
  return out;
}

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

/**
 * Streams the GGUF to a temporary sibling and renames it into place, so concurrent writers of the same
 * bytes and readers never see a half-written file.
 */
export async function writeGgufFile(path: string, input: GgufWriteInput): Promise<GgufWriteResult> {
  const temporaryPath = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temporaryPath, "w");
  try {
    const result = await writeGguf(input, {
      write: async (chunk) => {
        await handle.write(chunk);
      },
    });
    await handle.close();
    await rename(temporaryPath, path);
    return result;
  } catch (error: unknown) {
    await handle.close().catch(() => undefined);
    await rm(temporaryPath, { force: true });
    throw error;
  }
}
