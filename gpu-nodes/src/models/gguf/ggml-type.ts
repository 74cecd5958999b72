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

export function findGgmlTypeName(type: GgmlTypeId): GgmlTypeName | undefined {
  const entry = Object.entries(GGML_TYPE).find(([, id]) => id === type);
  return entry?.[0] as GgmlTypeName | undefined;
}
