import { open } from "node:fs/promises";
import {
  GGML_TYPE,
  GGUF_MAGIC,
  GGUF_VALUE_TYPE,
  alignOffset,
  measureTensorBytes,
  resolveGgufAlignment,
  type GgmlTypeId,
  type GgufByteSource,
  type GgufHeader,
  type GgufScalarKind,
  type GgufScalarValue,
  type GgufTensorInfo,
  type GgufValue,
  type GgufValueKind,
} from "./types.ts";

/**
 * A typed GGUF reader for the files our writer makes (test models, LoRA fixtures) and for tensor data.
 * Models we only inspect (the storage planner) are read with node-llama-cpp's `readGgufFileInfo`, which
 * also handles split files and remote URIs. It cannot replace this reader: it folds every GGUF value type
 * into a JS number/bigint (u8, u32, f32 all read back as `4`), so it cannot check that a file holds the
 * exact types written (llama.cpp aborts on an `adapter.lora.alpha` that is not f32), it reads paths and
 * URIs only (not an in-memory source), and it gives no tensor payloads.
 */

/** The window handed to the parser ended before the header did; retry with at least `neededBytes`. */
class GgufNeedMoreBytesError extends Error {
  constructor(readonly neededBytes: number) {
    super(`GGUF header continues past the ${neededBytes}-byte window`);
    this.name = "GgufNeedMoreBytesError";
  }
}

const utf8 = new TextDecoder("utf-8");

/** Little-endian cursor over a prefix of a file of `fileSize` bytes. */
class ByteReader {
  private readonly view: DataView;
  private position = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly fileSize: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get offset(): number {
    return this.position;
  }

  /** Bytes left in the whole file, to reject absurd counts before allocating for them. */
  get remainingInFile(): number {
    return this.fileSize - this.position;
  }

  u8(): number {
    return this.view.getUint8(this.take(1));
  }
  i8(): number {
    return this.view.getInt8(this.take(1));
  }
  u16(): number {
    return this.view.getUint16(this.take(2), true);
  }
  i16(): number {
    return this.view.getInt16(this.take(2), true);
  }
  u32(): number {
    return this.view.getUint32(this.take(4), true);
  }
  i32(): number {
    return this.view.getInt32(this.take(4), true);
  }
  f32(): number {
    return this.view.getFloat32(this.take(4), true);
  }
  f64(): number {
    return this.view.getFloat64(this.take(8), true);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.take(8), true);
  }
  i64(): bigint {
    return this.view.getBigInt64(this.take(8), true);
  }
  bool(): boolean {
    const byte = this.u8();
    if (byte > 1) throw new Error(`invalid GGUF bool byte ${byte} at offset ${this.position - 1}`);
    return byte === 1;
  }

  /** A u64 used as a count or offset; must fit a JS number exactly. */
  size(): number {
    const value = this.u64();
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`GGUF size ${value} is too large`);
    return Number(value);
  }

  string(): string {
    const length = this.size();
    const start = this.take(length);
    return utf8.decode(this.bytes.subarray(start, start + length));
  }

  raw(length: number): Uint8Array {
    const start = this.take(length);
    return this.bytes.subarray(start, start + length);
  }

  private take(count: number): number {
    const start = this.position;
    const end = start + count;
    if (end > this.bytes.length) {
      if (end > this.fileSize || this.bytes.length >= this.fileSize) {
        throw new Error(`GGUF file is truncated: needs ${end} bytes, has ${this.fileSize}`);
      }
      throw new GgufNeedMoreBytesError(end);
    }
    this.position = end;
    return start;
  }
}

/** v2 and v3 share the little-endian layout; v1 used 32-bit counts and is long gone. */
const SUPPORTED_VERSIONS: ReadonlySet<number> = new Set([2, 3]);
const MAX_TENSOR_DIMS = 4;

const KIND_BY_ID: ReadonlyMap<number, GgufValueKind> = new Map(
  Object.entries(GGUF_VALUE_TYPE).map(([kind, id]) => [id, kind as GgufValueKind]),
);

/**
 * Parses magic, metadata and tensor infos from the first `bytes.length` bytes of a `fileSize`-byte file.
 * Throws GgufNeedMoreBytesError when the header runs past the given prefix.
 */
export function parseGgufHeader(bytes: Uint8Array, fileSize: number): GgufHeader {
  const reader = new ByteReader(bytes, fileSize);
  const magic = new TextDecoder().decode(reader.raw(4));
  if (magic !== GGUF_MAGIC) throw new Error(`not a GGUF file (magic ${JSON.stringify(magic)})`);
  const version = reader.u32();
  if (!SUPPORTED_VERSIONS.has(version)) throw new Error(`unsupported GGUF version ${version}`);
  const tensorCount = reader.size();
  const kvCount = reader.size();

  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = reader.string();
    if (metadata.has(key)) throw new Error(`duplicate GGUF metadata key ${key}`);
    metadata.set(key, parseValue(reader, readKind(reader)));
  }
  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) tensors.push(parseTensorInfo(reader));

  const alignment = resolveGgufAlignment(metadata);
  return { version, metadata, tensors, alignment, dataOffset: alignOffset(reader.offset, alignment) };
}

function readKind(reader: ByteReader): GgufValueKind {
  const id = reader.u32();
  const kind = KIND_BY_ID.get(id);
  if (kind === undefined) throw new Error(`unknown GGUF value type ${id}`);
  return kind;
}

function parseValue(reader: ByteReader, kind: GgufValueKind): GgufValue {
  if (kind !== "array") return parseScalar(reader, kind);
  const itemType = readKind(reader);
  if (itemType === "array") throw new Error("nested GGUF arrays are not supported");
  const count = reader.size();
  if (count > reader.remainingInFile) throw new Error(`GGUF array of ${count} items exceeds the file`);
  const values = Array.from({ length: count }, () => parseScalar(reader, itemType).value);
  // Items were produced by parseScalar for exactly itemType, so the pairing holds.
  return { type: "array", itemType, values } as GgufValue;
}

function parseScalar(reader: ByteReader, kind: GgufScalarKind): GgufScalarValue {
  switch (kind) {
    case "u8":
      return { type: kind, value: reader.u8() };
    case "i8":
      return { type: kind, value: reader.i8() };
    case "u16":
      return { type: kind, value: reader.u16() };
    case "i16":
      return { type: kind, value: reader.i16() };
    case "u32":
      return { type: kind, value: reader.u32() };
    case "i32":
      return { type: kind, value: reader.i32() };
    case "f32":
      return { type: kind, value: reader.f32() };
    case "bool":
      return { type: kind, value: reader.bool() };
    case "string":
      return { type: kind, value: reader.string() };
    case "u64":
      return { type: kind, value: reader.u64() };
    case "i64":
      return { type: kind, value: reader.i64() };
    case "f64":
      return { type: kind, value: reader.f64() };
  }
}

function parseTensorInfo(reader: ByteReader): GgufTensorInfo {
  const name = reader.string();
  const dimCount = reader.u32();
  if (dimCount === 0 || dimCount > MAX_TENSOR_DIMS) throw new Error(`tensor ${name} has ${dimCount} dims`);
  const dims = Array.from({ length: dimCount }, () => reader.size());
  const type = reader.u32();
  const offset = reader.size();
  return { name, dims, type, offset };
}

/** Enough for a small model's header in one read; 32k-vocab headers (~1 MB of tokens) take a few more. */
export const DEFAULT_HEADER_WINDOW_BYTES = 256 * 1024;

/** Parses the header from a growing prefix of the source, never reading tensor data past it. */
export async function readGgufHeader(
  source: GgufByteSource,
  options: { initialWindowBytes?: number } = {},
): Promise<GgufHeader> {
  let window = await source.read(
    0,
    Math.min(options.initialWindowBytes ?? DEFAULT_HEADER_WINDOW_BYTES, source.size),
  );
  for (;;) {
    try {
      return parseGgufHeader(window, source.size);
    } catch (error: unknown) {
      if (!(error instanceof GgufNeedMoreBytesError)) throw error;
      const nextLength = Math.min(source.size, Math.max(window.length * 2, error.neededBytes));
      window = concatBytes(window, await source.read(window.length, nextLength - window.length));
    }
  }
}

function concatBytes(head: Uint8Array, tail: Uint8Array): Uint8Array {
  const joined = new Uint8Array(head.length + tail.length);
  joined.set(head);
  joined.set(tail, head.length);
  return joined;
}

/** The raw payload of one tensor, located through a previously read header. */
export async function readGgufTensorData(
  source: GgufByteSource,
  header: GgufHeader,
  tensorName: string,
): Promise<Uint8Array> {
  const tensor = header.tensors.find((t) => t.name === tensorName);
  if (!tensor) throw new Error(`tensor ${tensorName} is not in the GGUF file`);
  const start = header.dataOffset + tensor.offset;
  const length = measureTensorBytes(tensor);
  if (start + length > source.size) throw new Error(`tensor ${tensorName} runs past the end of the file`);
  return source.read(start, length);
}

/** Runs `use` with a byte source over the file, closing the handle afterwards. */
async function withGgufFileSource<T>(path: string, use: (source: GgufByteSource) => Promise<T>): Promise<T> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const source: GgufByteSource = {
      size,
      read: async (offset, length) => {
        const buffer = new Uint8Array(length);
        const { bytesRead } = await handle.read(buffer, 0, length, offset);
        if (bytesRead !== length)
          throw new Error(`short read of ${path} at ${offset}: ${bytesRead}/${length}`);
        return buffer;
      },
    };
    return await use(source);
  } finally {
    await handle.close();
  }
}

export function readGgufFileHeader(path: string): Promise<GgufHeader> {
  return withGgufFileSource(path, (source) => readGgufHeader(source));
}

export function decodeFloat16(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Float values of an F32 or F16 payload; quantized types are not decoded here. */
export function decodeTensorData(bytes: Uint8Array, type: GgmlTypeId): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type === GGML_TYPE.F32) {
    return Float32Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
  }
  if (type === GGML_TYPE.F16) {
    return Float32Array.from({ length: bytes.length / 2 }, (_, i) =>
      decodeFloat16(view.getUint16(i * 2, true)),
    );
  }
  throw new Error(`decoding ggml type ${type} is not supported`);
}
