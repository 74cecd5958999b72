import type { Token } from "node-llama-cpp";

/** A point where the first `tokens` retained tokens stand for exactly the first `chars` of the retained text. */
interface TextBoundary {
  tokens: number;
  chars: number;
}

/** One piece of a completion as LlamaCompletion hands it out: tokens and the text they were streamed as. */
export interface SampledChunk {
  tokens: readonly Token[];
  text: string;
}

/** The prompt of one generation, as tokens, and what of it is known to line up with its text. */
export interface PromptPlan {
  readonly conversationId: string;
  /** The whole prompt, with the tokens the context always starts with (BOS) in front. */
  tokens: Token[];
  /** Leading tokens taken from the slot as they are instead of tokenised from the prompt text. */
  retainedTokens: number;
  readonly text: string;
  readonly boundaries: readonly TextBoundary[];
}

/**
 * What one KV slot's tokens stand for as text, so the next prompt can reuse them even where tokenising that
 * text again would split it differently. A view carries the previous answer as text; the sampled tokens are not
 * always the tokenizer's own split of it (`"\n", "\n"` sampled where it makes `"\n\n"`; SentencePiece's leading
 * space on the first answer token, which the streamed text leaves out), and llama.cpp reuses KV only up to the
 * first differing token. So the slot remembers the boundaries where its tokens and the text agree: each prompt's
 * end and each streamed chunk, the text being the node's own report of those tokens. A prompt that starts with
 * the text up to a boundary takes the slot's tokens up to there and tokenises only the rest; a view that clips or
 * edits the answer matches up to the last boundary before the edit, and the rest is tokenised as text.
 */
export class SlotTokens {
  /** The conversation whose generation left the tokens: retained tokens are reused by it alone. */
  #conversationId: string | undefined;
  #text = "";
  #tokens: readonly Token[] = [];
  #boundaries: readonly TextBoundary[] = [];

  /** Drops what the slot held: it now serves another conversation, or its KV is in an unknown state. */
  forget(): void {
    this.#conversationId = undefined;
    this.#text = "";
    this.#tokens = [];
    this.#boundaries = [];
  }

  /**
   * The tokens for `prompt`. `held` is what the sequence holds now; retained tokens are used only as far as it
   * still holds them. `start` is what every context begins with (BOS or nothing). Another conversation's
   * prompt is tokenised as text; llama.cpp still reuses whatever prefix its tokens share with the slot.
   */
  plan(o: {
    conversationId: string;
    prompt: string;
    start: readonly Token[];
    held: readonly Token[];
    tokenize: (text: string) => Token[];
  }): PromptPlan {
    if (o.conversationId !== this.#conversationId) this.forget();
    const held = commonPrefixLength(this.#tokens, o.held);
    const chars = commonPrefixLength(this.#text, o.prompt);
    let best: TextBoundary | undefined;
    for (const b of this.#boundaries) {
      if (b.tokens > held || b.chars > chars) break;
      best = b;
    }
    if (!best || best.chars === 0) {
      const tokens = [...o.start, ...o.tokenize(o.prompt)];
      return {
        conversationId: o.conversationId,
        tokens,
        retainedTokens: 0,
        text: o.prompt,
        boundaries: [{ tokens: tokens.length, chars: o.prompt.length }],
      };
    }
    const rest = o.prompt.slice(best.chars);
    const tokens = [...this.#tokens.slice(0, best.tokens), ...(rest.length > 0 ? o.tokenize(rest) : [])];
    const kept = this.#boundaries.filter((b) => b.tokens <= best.tokens);
    const end = { tokens: tokens.length, chars: o.prompt.length };
    return {
      conversationId: o.conversationId,
      tokens,
      retainedTokens: best.tokens,
      text: o.prompt,
      boundaries: rest.length > 0 ? [...kept, end] : kept,
    };
  }

  /**
   * Records what the sequence holds after a generation on `plan`: `held` (the sequence's tokens) normally is the
   * prompt plus every sampled token but the last, which llama.cpp samples without evaluating. A chunk counts only
   * where its tokens are the ones the sequence holds (a stop trigger may re-split the text before it).
   */
  retain(plan: PromptPlan, chunks: readonly SampledChunk[], held: readonly Token[]): void {
    const expected = [...plan.tokens];
    const boundaries = [...plan.boundaries];
    let text = plan.text;
    for (const chunk of chunks) {
      expected.push(...chunk.tokens);
      text += chunk.text;
      boundaries.push({ tokens: expected.length, chars: text.length });
    }
    const valid = commonPrefixLength(expected, held);
    this.#conversationId = plan.conversationId;
    this.#tokens = held.slice(0, valid);
    this.#text = text;
    this.#boundaries = boundaries.filter((b) => b.tokens <= valid);
  }
}

function commonPrefixLength<T extends string | readonly Token[]>(a: T, b: T): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
