import { GGML_TYPE, countTensorElements } from "../../src/models/gguf/types.ts";
import { encodeF32Tensor, type GgufTensorInput } from "../../src/models/gguf/writer.ts";

export interface SeededRandom {
  /** Uniform in [0, 1). */
  nextUniform(): number;
  /** Standard normal (mean 0, std 1). */
  nextNormal(): number;
}

/**
 * mulberry32 + Box-Muller: tiny and fast. V8 computes Math.log/cos/sin with its own fdlibm port, so the
 * same Node version yields the same model bytes on every platform.
 */
export function createSeededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  let spareNormal: number | undefined;
  const nextUniform = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const nextNormal = (): number => {
    if (spareNormal !== undefined) {
      const value = spareNormal;
      spareNormal = undefined;
      return value;
    }
    // 1 - u keeps the log argument in (0, 1].
    const radius = Math.sqrt(-2 * Math.log(1 - nextUniform()));
    const angle = 2 * Math.PI * nextUniform();
    spareNormal = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
  return { nextUniform, nextNormal };
}

/** FNV-1a over the label, mixed into the base seed: each (model, tensor, adapter) gets its own stream. */
export function deriveSeed(baseSeed: number, label: string): number {
  let hash = (0x811c9dc5 ^ baseSeed) >>> 0;
  for (const byte of new TextEncoder().encode(label)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash;
}

/** Normal(0, std) values, as F32 weights are stored. */
export function generateNormalValues(count: number, std: number, seed: number): Float32Array {
  const random = createSeededRandom(seed);
  const values = new Float32Array(count);
  for (let i = 0; i < count; i++) values[i] = random.nextNormal() * std;
  return values;
}

/** An F32 tensor of Normal(0, std) values, generated only when the writer reaches it. */
export function createRandomTensor(
  name: string,
  dims: readonly number[],
  std: number,
  seed: number,
): GgufTensorInput {
  const count = countTensorElements(dims);
  return {
    name,
    dims,
    type: GGML_TYPE.F32,
    data: () => encodeF32Tensor(generateNormalValues(count, std, seed)),
  };
}

export function createFilledTensor(name: string, length: number, value: number): GgufTensorInput {
  return {
    name,
    dims: [length],
    type: GGML_TYPE.F32,
    data: () => encodeF32Tensor(new Float32Array(length).fill(value)),
  };
}
