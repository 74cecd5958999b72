import { alignOffset } from "./align-offset.ts";
import { ByteReader } from "./byte-reader.ts";
import { GGUF_MAGIC, GGUF_VALUE_TYPE } from "./gguf-types.ts";
import type {
  GgufHeader,
  GgufScalarKind,
  GgufScalarValue,
  GgufTensorInfo,
  GgufValue,
  GgufValueKind,
} from "./gguf-types.ts";
import { resolveGgufAlignment } from "./resolve-gguf-alignment.ts";

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
