import type { GgmlTypeId } from "./ggml-type.ts";

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
