/**
 * The GGUF data model shared by our writer and reader: metadata values with their on-disk types, tensor
 * infos, ggml element types and their block sizes, and the layout rules (alignment, payload size).
 */
/** GGUF metadata value type ids, as stored on disk. */
export const GGUF_VALUE_TYPE = {
  u8: 0,
  i8: 1,
  u16: 2,
  i16: 3,
  u32: 4,
  i32: 5,
  f32: 6,
  bool: 7,
  string: 8,
  array: 9,
  u64: 10,
  i64: 11,
  f64: 12,
} as const;

export type GgufValueKind = keyof typeof GGUF_VALUE_TYPE;
export type GgufScalarKind = Exclude<GgufValueKind, "array">;

/** 64-bit integers stay bigint so token counts and offsets never lose precision silently. */
export interface GgufScalarJsTypes {
  u8: number;
  i8: number;
  u16: number;
  i16: number;
  u32: number;
  i32: number;
  f32: number;
  bool: boolean;
  string: string;
  u64: bigint;
  i64: bigint;
  f64: number;
}

export type GgufScalarValue = {
  [K in GgufScalarKind]: { type: K; value: GgufScalarJsTypes[K] };
}[GgufScalarKind];

/** Arrays of arrays are legal in the spec but llama.cpp rejects them, so they are not modelled. */
export type GgufArrayValue = {
  [K in GgufScalarKind]: { type: "array"; itemType: K; values: readonly GgufScalarJsTypes[K][] };
}[GgufScalarKind];

export type GgufValue = GgufScalarValue | GgufArrayValue;

/** Insertion-ordered, so a writer given the same map produces the same bytes. */
export type GgufMetadata = ReadonlyMap<string, GgufValue>;

export interface GgufTensorInfo {
  name: string;
  /** GGUF order: ne0 (the contiguous, input-side dimension) first. */
  dims: readonly number[];
  type: GgmlTypeId;
  /** Byte offset relative to the start of the tensor data section. */
  offset: number;
}

export interface GgufHeader {
  version: number;
  metadata: GgufMetadata;
  tensors: readonly GgufTensorInfo[];
  alignment: number;
  /** Absolute file offset of the tensor data section. */
  dataOffset: number;
}

/** Random access to a GGUF file's bytes; lets the parser stay free of filesystem code. */
export interface GgufByteSource {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

export const GGUF_MAGIC = "GGUF";
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT_BYTES = 32;
export const GGUF_ALIGNMENT_KEY = "general.alignment";

/** ggml tensor element type ids (enum ggml_type), as stored in GGUF tensor infos. */
export const GGML_TYPE = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q8_1: 9,
  Q2_K: 10,
  Q3_K: 11,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  Q8_K: 15,
  IQ2_XXS: 16,
  IQ2_XS: 17,
  IQ3_XXS: 18,
  IQ1_S: 19,
  IQ4_NL: 20,
  IQ3_S: 21,
  IQ2_S: 22,
  IQ4_XS: 23,
  I8: 24,
  I16: 25,
  I32: 26,
  I64: 27,
  F64: 28,
  IQ1_M: 29,
  BF16: 30,
  TQ1_0: 34,
  TQ2_0: 35,
  MXFP4: 39,
  NVFP4: 40,
  Q1_0: 41,
} as const;

export type GgmlTypeName = keyof typeof GGML_TYPE;
/** Kept as a plain number: files may carry types newer than this table. */
export type GgmlTypeId = number;

export interface GgmlTypeTraits {
  /** Elements per quantization block (1 for plain types). */
  blockElements: number;
  blockBytes: number;
}

/** Mirrors ggml's type_traits (checked against llama.cpp's ggml_blck_size / ggml_type_size). */
const TRAITS_BY_ID: ReadonlyMap<GgmlTypeId, GgmlTypeTraits> = new Map([
  [GGML_TYPE.F32, { blockElements: 1, blockBytes: 4 }],
  [GGML_TYPE.F16, { blockElements: 1, blockBytes: 2 }],
  [GGML_TYPE.Q4_0, { blockElements: 32, blockBytes: 18 }],
  [GGML_TYPE.Q4_1, { blockElements: 32, blockBytes: 20 }],
  [GGML_TYPE.Q5_0, { blockElements: 32, blockBytes: 22 }],
  [GGML_TYPE.Q5_1, { blockElements: 32, blockBytes: 24 }],
  [GGML_TYPE.Q8_0, { blockElements: 32, blockBytes: 34 }],
  [GGML_TYPE.Q8_1, { blockElements: 32, blockBytes: 36 }],
  [GGML_TYPE.Q2_K, { blockElements: 256, blockBytes: 84 }],
  [GGML_TYPE.Q3_K, { blockElements: 256, blockBytes: 110 }],
  [GGML_TYPE.Q4_K, { blockElements: 256, blockBytes: 144 }],
  [GGML_TYPE.Q5_K, { blockElements: 256, blockBytes: 176 }],
  [GGML_TYPE.Q6_K, { blockElements: 256, blockBytes: 210 }],
  [GGML_TYPE.Q8_K, { blockElements: 256, blockBytes: 292 }],
  [GGML_TYPE.IQ2_XXS, { blockElements: 256, blockBytes: 66 }],
  [GGML_TYPE.IQ2_XS, { blockElements: 256, blockBytes: 74 }],
  [GGML_TYPE.IQ3_XXS, { blockElements: 256, blockBytes: 98 }],
  [GGML_TYPE.IQ1_S, { blockElements: 256, blockBytes: 50 }],
  [GGML_TYPE.IQ4_NL, { blockElements: 32, blockBytes: 18 }],
  [GGML_TYPE.IQ3_S, { blockElements: 256, blockBytes: 110 }],
  [GGML_TYPE.IQ2_S, { blockElements: 256, blockBytes: 82 }],
  [GGML_TYPE.IQ4_XS, { blockElements: 256, blockBytes: 136 }],
  [GGML_TYPE.I8, { blockElements: 1, blockBytes: 1 }],
  [GGML_TYPE.I16, { blockElements: 1, blockBytes: 2 }],
  [GGML_TYPE.I32, { blockElements: 1, blockBytes: 4 }],
  [GGML_TYPE.I64, { blockElements: 1, blockBytes: 8 }],
  [GGML_TYPE.F64, { blockElements: 1, blockBytes: 8 }],
  [GGML_TYPE.IQ1_M, { blockElements: 256, blockBytes: 56 }],
  [GGML_TYPE.BF16, { blockElements: 1, blockBytes: 2 }],
  [GGML_TYPE.TQ1_0, { blockElements: 256, blockBytes: 54 }],
  [GGML_TYPE.TQ2_0, { blockElements: 256, blockBytes: 66 }],
  [GGML_TYPE.MXFP4, { blockElements: 32, blockBytes: 17 }],
  [GGML_TYPE.NVFP4, { blockElements: 64, blockBytes: 36 }],
  [GGML_TYPE.Q1_0, { blockElements: 128, blockBytes: 18 }],
]);

export function getGgmlTypeTraits(type: GgmlTypeId): GgmlTypeTraits {
  const traits = TRAITS_BY_ID.get(type);
  if (!traits) throw new Error(`unknown ggml type id ${type}`);
  return traits;
}

export interface TensorShape {
  name: string;
  dims: readonly number[];
  type: GgmlTypeId;
}

export interface TensorMeasure {
  name: string;
  parameters: number;
  bytes: number;
}

export interface GgufTensorTotals {
  totalParameters: number;
  totalBytes: number;
  byTensor: readonly TensorMeasure[];
}

export function countTensorElements(dims: readonly number[]): number {
  return dims.reduce((product, dim) => product * dim, 1);
}

/** Unpadded payload size, as ggml_nbytes computes it for a contiguous tensor. */
export function measureTensorBytes(tensor: TensorShape): number {
  const { blockElements, blockBytes } = getGgmlTypeTraits(tensor.type);
  const rowElements = tensor.dims[0] ?? 1;
  if (rowElements % blockElements !== 0) {
    throw new Error(
      `tensor ${tensor.name}: ne0=${rowElements} is not a multiple of block size ${blockElements}`,
    );
  }
  return (countTensorElements(tensor.dims) / blockElements) * blockBytes;
}

/** Per-tensor and total parameter counts and payload bytes (excluding alignment padding). */
export function measureGgufTensors(tensors: readonly TensorShape[]): GgufTensorTotals {
  const byTensor = tensors.map((tensor) => ({
    name: tensor.name,
    parameters: countTensorElements(tensor.dims),
    bytes: measureTensorBytes(tensor),
  }));
  return {
    totalParameters: byTensor.reduce((sum, t) => sum + t.parameters, 0),
    totalBytes: byTensor.reduce((sum, t) => sum + t.bytes, 0),
    byTensor,
  };
}

export function alignOffset(offset: number, alignment: number): number {
  const remainder = offset % alignment;
  return remainder === 0 ? offset : offset + alignment - remainder;
}

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
