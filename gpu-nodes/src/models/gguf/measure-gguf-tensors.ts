import { getGgmlTypeTraits } from "./ggml-type.ts";
import type { GgmlTypeId } from "./ggml-type.ts";

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
