import {
  getGgufString,
  type GgufMetadata,
  type GgufValue,
  type TensorShape,
} from "../../src/models/gguf/types.ts";
import type { GgufTensorInput, GgufWriteInput } from "../../src/models/gguf/writer.ts";
import { createRandomTensor, deriveSeed } from "./seeded-tensors.ts";

export interface LoraAdapterOptions {
  /** The base model's header (or anything with its metadata and tensor shapes). */
  base: { metadata: GgufMetadata; tensors: readonly TensorShape[] };
  /** Distinguishes adapters: it seeds the weights and names the file. */
  label: string;
  seed?: number;
  rank?: number;
  /** llama.cpp scales B·A by alpha / rank. */
  alpha?: number;
  /** Base tensor name suffixes (within each block) that get a low-rank delta. */
  targets?: readonly string[];
  /** Std of the delta's entries relative to 1/sqrt(n_in), the base projections' own scale. */
  strength?: number;
}

export const DEFAULT_LORA_SEED = 7;
export const DEFAULT_LORA_RANK = 4;
export const DEFAULT_LORA_TARGETS: readonly string[] = [
  "attn_q.weight",
  "attn_k.weight",
  "attn_v.weight",
  "attn_output.weight",
  "ffn_gate.weight",
  "ffn_up.weight",
  "ffn_down.weight",
];
/** Deltas as large as the base weights: enough that greedy output visibly changes. */
export const DEFAULT_LORA_STRENGTH = 1;

const BLOCK_TENSOR = /^blk\.\d+\.(.+)$/;

/**
 * A LoRA GGUF in the layout llama.cpp loads: `<base>.lora_a` with dims [n_in, rank] and `<base>.lora_b`
 * with dims [rank, n_out], both F32, for each targeted 2-D projection of the base.
 */
export function buildLoraAdapter(options: LoraAdapterOptions): GgufWriteInput {
  const rank = options.rank ?? DEFAULT_LORA_RANK;
  const alpha = options.alpha ?? rank;
  const strength = options.strength ?? DEFAULT_LORA_STRENGTH;
  const targets = new Set(options.targets ?? DEFAULT_LORA_TARGETS);
  const seed = deriveSeed(options.seed ?? DEFAULT_LORA_SEED, options.label);
  const architecture = getGgufString(options.base.metadata, "general.architecture");

  const tensors: GgufTensorInput[] = [];
  for (const tensor of options.base.tensors) {
    const suffix = BLOCK_TENSOR.exec(tensor.name)?.[1];
    if (suffix === undefined || !targets.has(suffix)) continue;
    const [nIn, nOut] = tensor.dims;
    if (tensor.dims.length !== 2 || nIn === undefined || nOut === undefined) {
      throw new Error(`LoRA target ${tensor.name} is not a matrix`);
    }
    // std(B·A) = sqrt(rank)·stdA·stdB = strength/sqrt(n_in) once alpha/rank is applied.
    const stdA = 1 / Math.sqrt(nIn);
    const stdB = (strength * rank) / (alpha * Math.sqrt(rank));
    tensors.push(
      createRandomTensor(
        `${tensor.name}.lora_a`,
        [nIn, rank],
        stdA,
        deriveSeed(seed, `${tensor.name}.lora_a`),
      ),
      createRandomTensor(
        `${tensor.name}.lora_b`,
        [rank, nOut],
        stdB,
        deriveSeed(seed, `${tensor.name}.lora_b`),
      ),
    );
  }
  if (tensors.length === 0)
    throw new Error(`base has no tensors matching LoRA targets ${[...targets].join(", ")}`);

  const metadata = new Map<string, GgufValue>([
    ["general.architecture", { type: "string", value: architecture }],
    ["general.type", { type: "string", value: "adapter" }],
    ["general.name", { type: "string", value: `lora-${options.label}` }],
    ["adapter.type", { type: "string", value: "lora" }],
    ["adapter.lora.alpha", { type: "f32", value: alpha }],
  ]);
  return { metadata, tensors };
}
