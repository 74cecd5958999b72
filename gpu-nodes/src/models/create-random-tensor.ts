import { generateNormalValues } from "./create-seeded-random.ts";
import { encodeF32Tensor, type GgufTensorInput } from "./gguf/writer.ts";
import { GGML_TYPE, countTensorElements } from "./gguf/types.ts";

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
