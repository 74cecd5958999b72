import { GGML_TYPE, type GgufValue } from "../../src/models/gguf/types.ts";
import { encodeF32Tensor, type GgufTensorInput, type GgufWriteInput } from "../../src/models/gguf/writer.ts";
import {
  createFilledTensor,
  createRandomTensor,
  deriveSeed,
  generateNormalValues,
} from "./seeded-tensors.ts";

/** The mesh's own vocabulary (adapter and role names) so prompts used in tests tokenize to few tokens. */
const MESH_WORDS = `
  chat agent coding genui route summary user assistant system tool model adapter request response
  message prompt token answer question task plan code function return value error test data json query
  result output input stream context cache node server client edge mesh lora base
`;

const COMMON_ENGLISH_WORDS = `
  the be to of and a in that have i it for not on with he as you do at this but his by from they we
  say her she or an will my one all would there their what so up out if about who get which go me when
  make can like time no just him know take people into year your good some could them see other than
  then now look only come its over think also back after use two how our work first well way even new
  want because any these give day most us is are was were been has had did does said made here where
  why very more many much such long little great old right big high small large next early young
  important few public bad same able last own never world life hand part child eye woman man place
  week case point government company number group problem fact hello hi thanks thank please yes okay
  sure help need find tell ask show try call keep let put mean seem leave feel write read run move
  live play turn start stop open close change follow learn name file line word text list item page
  form button view screen color image table row column key type string number true false null class
  import export const async await print def var while loop each every before between under again still
  always often today tomorrow yesterday morning night water food home house school city country money
  book story friend family love happy nice weather simple short quick fast slow next example idea
  reason information service program computer language english write search send receive
`;

/** Word pieces of the tiny model's vocabulary, in a fixed order so the vocabulary is reproducible. */
export const TINY_VOCAB_WORDS: readonly string[] = [
  ...new Set(`${MESH_WORDS} ${COMMON_ENGLISH_WORDS}`.split(/\s+/).filter((word) => word.length > 0)),
];

/** llama.cpp's token attribute ids (enum llama_token_type). */
export const SPM_TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

/** SentencePiece's visible space; tokenizers replace " " with it before matching pieces. */
export const SPM_SPACE = "\u2581";

const BYTE_TOKEN_COUNT = 256;
const FIRST_PRINTABLE_ASCII = 0x21;
const LAST_PRINTABLE_ASCII = 0x7e;

export interface SpmVocab {
  tokens: readonly string[];
  scores: readonly number[];
  tokenTypes: readonly number[];
  unknownId: number;
  bosId: number;
  eosId: number;
}

/**
 * `<unk> <s> </s>`, byte fallback `<0x00>..<0xFF>`, the space piece, printable ASCII, then "▁word" for each
 * word (and its capitalised form) with every prefix: llama.cpp's SPM tokenizer only merges two symbols
 * when the merged string is itself a token, so "▁hello" is reachable only through "▁h", "▁he", ….
 * Longer pieces score higher so the longest reachable piece wins.
 */
export function buildSpmVocab(words: readonly string[]): SpmVocab {
  const tokens: string[] = [];
  const scores: number[] = [];
  const tokenTypes: number[] = [];
  const seen = new Set<string>();
  const add = (token: string, type: number, score: number): void => {
    if (seen.has(token)) return;
    seen.add(token);
    tokens.push(token);
    tokenTypes.push(type);
    scores.push(score);
  };

  add("<unk>", SPM_TOKEN_TYPE.unknown, 0);
  add("<s>", SPM_TOKEN_TYPE.control, 0);
  add("</s>", SPM_TOKEN_TYPE.control, 0);
  for (let byte = 0; byte < BYTE_TOKEN_COUNT; byte++) {
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`, SPM_TOKEN_TYPE.byte, 0);
  }
  add(SPM_SPACE, SPM_TOKEN_TYPE.normal, 1);
  for (let code = FIRST_PRINTABLE_ASCII; code <= LAST_PRINTABLE_ASCII; code++) {
    add(String.fromCharCode(code), SPM_TOKEN_TYPE.normal, 1);
  }
  for (const word of words.flatMap((w) => [w, capitalize(w)])) {
    const piece = SPM_SPACE + word;
    for (let end = 2; end <= piece.length; end++) add(piece.slice(0, end), SPM_TOKEN_TYPE.normal, end);
  }
  return { tokens, scores, tokenTypes, unknownId: 0, bosId: 1, eosId: 2 };
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

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
