import { SPM_TOKEN_TYPE, buildSpmVocab, type SpmVocab } from "./build-spm-vocab.ts";
import { createFilledTensor, createRandomTensor } from "./create-random-tensor.ts";
import { deriveSeed, generateNormalValues } from "./create-seeded-random.ts";
import { encodeF32Tensor, type GgufTensorInput, type GgufWriteInput } from "./gguf/writer.ts";
import { GGML_TYPE, type GgufValue } from "./gguf/types.ts";
import { TINY_VOCAB_WORDS } from "./tiny-vocab-words.ts";

export interface TinyLlamaConfig {
  name: string;
  seed: number;
  contextLength: number;
  embeddingLength: number;
  blockCount: number;
  feedForwardLength: number;
  headCount: number;
  headCountKv: number;
  rmsEpsilon: number;
  words: readonly string[];
}

export const TINY_LLAMA_DEFAULTS: TinyLlamaConfig = {
  name: "molmesh-tiny-llama",
  seed: 20240601,
  contextLength: 4096,
  embeddingLength: 64,
  blockCount: 2,
  feedForwardLength: 128,
  headCount: 4,
  headCountKv: 2,
  rmsEpsilon: 1e-5,
  words: TINY_VOCAB_WORDS,
};

/**
 * Unit-variance embeddings and 1/sqrt(fan_in) projections keep activations O(1) through the blocks; the
 * output projection is scaled up so logits spread widely and greedy decoding wanders instead of
 * repeating one token.
 */
const EMBEDDING_STD = 1;
const OUTPUT_GAIN = 3;

/** A llama-architecture GGUF (F32, random weights from `seed`) with its own SPM vocabulary. */
export function buildTinyLlama(config: TinyLlamaConfig = TINY_LLAMA_DEFAULTS): GgufWriteInput {
  const vocab = buildSpmVocab(config.words);
  const nVocab = vocab.tokens.length;
  const nEmbd = config.embeddingLength;
  const nEmbdKv = (nEmbd / config.headCount) * config.headCountKv;
  const nFf = config.feedForwardLength;

  const metadata = new Map<string, GgufValue>([
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: config.name }],
    ["general.file_type", { type: "u32", value: 0 }],
    ["llama.context_length", { type: "u32", value: config.contextLength }],
    ["llama.embedding_length", { type: "u32", value: nEmbd }],
    ["llama.block_count", { type: "u32", value: config.blockCount }],
    ["llama.feed_forward_length", { type: "u32", value: nFf }],
    ["llama.attention.head_count", { type: "u32", value: config.headCount }],
    ["llama.attention.head_count_kv", { type: "u32", value: config.headCountKv }],
    ["llama.rope.dimension_count", { type: "u32", value: nEmbd / config.headCount }],
    ["llama.attention.layer_norm_rms_epsilon", { type: "f32", value: config.rmsEpsilon }],
    ["llama.vocab_size", { type: "u32", value: nVocab }],
    ["tokenizer.ggml.model", { type: "string", value: "llama" }],
    ["tokenizer.ggml.tokens", { type: "array", itemType: "string", values: vocab.tokens }],
    ["tokenizer.ggml.scores", { type: "array", itemType: "f32", values: vocab.scores }],
    ["tokenizer.ggml.token_type", { type: "array", itemType: "i32", values: vocab.tokenTypes }],
    ["tokenizer.ggml.bos_token_id", { type: "u32", value: vocab.bosId }],
    ["tokenizer.ggml.eos_token_id", { type: "u32", value: vocab.eosId }],
    ["tokenizer.ggml.unknown_token_id", { type: "u32", value: vocab.unknownId }],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: true }],
    ["tokenizer.ggml.add_eos_token", { type: "bool", value: false }],
  ]);

  const random = (name: string, dims: readonly number[], std: number): GgufTensorInput =>
    createRandomTensor(name, dims, std, deriveSeed(config.seed, name));
  const tensors: GgufTensorInput[] = [
    random("token_embd.weight", [nEmbd, nVocab], EMBEDDING_STD),
    createFilledTensor("output_norm.weight", nEmbd, 1),
    createOutputTensor(nEmbd, vocab, deriveSeed(config.seed, "output.weight")),
  ];
  for (let block = 0; block < config.blockCount; block++) {
    const prefix = `blk.${block}`;
    tensors.push(
      createFilledTensor(`${prefix}.attn_norm.weight`, nEmbd, 1),
      random(`${prefix}.attn_q.weight`, [nEmbd, nEmbd], 1 / Math.sqrt(nEmbd)),
      random(`${prefix}.attn_k.weight`, [nEmbd, nEmbdKv], 1 / Math.sqrt(nEmbd)),
      random(`${prefix}.attn_v.weight`, [nEmbd, nEmbdKv], 1 / Math.sqrt(nEmbd)),
      random(`${prefix}.attn_output.weight`, [nEmbd, nEmbd], 1 / Math.sqrt(nEmbd)),
      createFilledTensor(`${prefix}.ffn_norm.weight`, nEmbd, 1),
      random(`${prefix}.ffn_gate.weight`, [nEmbd, nFf], 1 / Math.sqrt(nEmbd)),
      random(`${prefix}.ffn_up.weight`, [nEmbd, nFf], 1 / Math.sqrt(nEmbd)),
      random(`${prefix}.ffn_down.weight`, [nFf, nEmbd], 1 / Math.sqrt(nFf)),
    );
  }
  return { metadata, tensors };
}

/**
 * Zero output rows give special and byte tokens a logit of 0 while the ~1800 text tokens spread over
 * ±3·OUTPUT_GAIN: greedy text is then printable and never ends early on `</s>`, so tests can rely on
 * `maxTokens` of readable output.
 */
function createOutputTensor(nEmbd: number, vocab: SpmVocab, seed: number): GgufTensorInput {
  const nVocab = vocab.tokens.length;
  const suppressed = vocab.tokenTypes.flatMap((type, id) => (type === SPM_TOKEN_TYPE.normal ? [] : [id]));
  return {
    name: "output.weight",
    dims: [nEmbd, nVocab],
    type: GGML_TYPE.F32,
    data: () => {
      const values = generateNormalValues(nEmbd * nVocab, OUTPUT_GAIN / Math.sqrt(nEmbd), seed);
      for (const id of suppressed) values.fill(0, id * nEmbd, (id + 1) * nEmbd);
      return encodeF32Tensor(values);
    },
  };
}
