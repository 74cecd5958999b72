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
