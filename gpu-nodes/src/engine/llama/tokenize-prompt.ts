import type { GgufMetadataGeneral, GgufMetadataTokenizer, LlamaModel, Token } from "node-llama-cpp";
import {
  SPECIAL_CLOSE,
  SPECIAL_OPEN,
  detectChatTemplateFamily,
  stripSpecialSentinels,
} from "../../../../schema/harness/chat-templates.ts";
import type { ServedModel } from "../../../../schema/wire/v2/index.ts";

const SPECIAL_RUN = new RegExp(`${SPECIAL_OPEN}([^${SPECIAL_OPEN}${SPECIAL_CLOSE}]*)${SPECIAL_CLOSE}`, "gu");

/**
 * A view's tokens. Text between the sentinel pair was put there by a harness template and is tokenized with
 * special tokens parsed (`<|im_start|>` becomes its one control token); everything else is conversation text,
 * tokenized as plain text, so a user who types `<|im_start|>system` gets the tokens of those characters and
 * never opens a turn. A stray sentinel (never sent by the edge, which strips them from client text) is dropped.
 */
export function tokenizePrompt(model: LlamaModel, prompt: string): Token[] {
  const tokens: Token[] = [];
  let last = 0;
  const pushText = (text: string) => {
    const plain = stripSpecialSentinels(text);
    if (plain !== "") tokens.push(...model.tokenize(plain, false, "trimLeadingSpace"));
  };
  for (const match of prompt.matchAll(SPECIAL_RUN)) {
    pushText(prompt.slice(last, match.index));
    const special = match[1] ?? "";
    if (special !== "") tokens.push(...model.tokenize(special, true, "trimLeadingSpace"));
    last = match.index + match[0].length;
  }
  pushText(prompt.slice(last));
  return tokens;
}

/**
 * The longest prefix of `text` that tokenizes the same whatever follows it: up to the end of its last special
 * token or newline. Plain text that follows a newline never merges with it into one token (BPE pre-tokenizers
 * split newlines from words; SentencePiece gives a word after a newline no leading "▁"), where text after a
 * trailing space or letter may ("[INST] " + "Hi" is "▁Hi", not "▁" "Hi").
 */
export function cutAtStableBoundary(text: string): string {
  const end = Math.max(text.lastIndexOf(SPECIAL_CLOSE), text.lastIndexOf("\n"));
  return end < 0 ? "" : text.slice(0, end + 1);
}

/**
 * A whole view as the context holds it from an empty slot: BOS (where the model wants one), then the prompt's
 * tokens. The router trainer tokenizes its corpus with this, so it trains on the tokens the node evaluates.
 */
export function tokenizeView(model: LlamaModel, prompt: string): Token[] {
  const tokens = tokenizePrompt(model, prompt);
  return model.tokens.shouldPrependBosToken && model.tokens.bos != null
    ? [model.tokens.bos, ...tokens]
    : tokens;
}

/** What this node tells the edge about the model it serves: chat format (from the GGUF), context, tokenizer. */
export function describeServedModel(model: LlamaModel, contextTokens: number): ServedModel {
  const metadata = readFileMetadata(model);
  const { family, warning } = detectChatTemplateFamily({
    architecture: metadata.general?.architecture,
    chatTemplate: metadata.tokenizer?.chat_template,
    name: metadata.general?.name,
  });
  const ggml = metadata.tokenizer?.ggml;
  const tokenizer = [ggml?.model ?? "unknown", ggml?.pre].filter((part) => part !== undefined).join("/");
  return { templateFamily: family, contextTokens, tokenizer, ...(warning ? { warning } : {}) };
}

/**
 * A GGUF's metadata as the file has it: node-llama-cpp types `general` and `tokenizer.ggml` as always present, but
 * they are only the keys the file carries, and a file may lack any of them.
 */
export interface FileMetadata {
  readonly general?: Partial<GgufMetadataGeneral>;
  readonly tokenizer?: Omit<Partial<GgufMetadataTokenizer>, "ggml"> & {
    readonly ggml?: Partial<GgufMetadataTokenizer["ggml"]>;
  };
}

export function readFileMetadata(model: LlamaModel): FileMetadata {
  return model.fileInfo.metadata;
}
