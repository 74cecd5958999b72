import { LlamaCompletion, type LlamaContextSequence, type LlamaGrammar, type Token } from "node-llama-cpp";
import {
  CancelledError,
  ContextLengthExceededError,
  EngineFailureError,
  MolWireError,
} from "../../../../schema/wire/v2/index.ts";
import type { EngineGenerateRequest, EngineGenerateResult } from "../engine.ts";
import { tokenizePrompt } from "./tokenize-prompt.ts";
import type { SampledChunk, SlotTokens } from "./slot-tokens.ts";

export interface SequenceGeneration {
  sequence: LlamaContextSequence;
  /** What the slot's tokens stand for, so a prompt that repeats the last answer reuses its sampled tokens. */
  slotTokens: SlotTokens;
  grammar: LlamaGrammar | undefined;
  request: EngineGenerateRequest;
  now: () => number;
  /** Awaited before the prompt's evaluation and between generated tokens (a summary's yield to latency hops). */
  pauseBetweenTokens?: (() => Promise<void>) | undefined;
}

/**
 * Runs one completion on a KV slot. llama.cpp keeps the part of the sequence that matches the new prompt and
 * evaluates only the rest; the reusable prefix is read from the sequence state right before the call, under
 * the slot's lease, so it is exactly what llama.cpp skips.
 */
export async function generateOnSequence({
  sequence,
  slotTokens,
  grammar,
  request,
  now,
  pauseBetweenTokens,
}: SequenceGeneration): Promise<Omit<EngineGenerateResult, "queueMs">> {
  const model = sequence.model;
  const bos = model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
  const start: Token[] = bos == null ? [] : [bos];
  const plan = slotTokens.plan({
    conversationId: request.conversationId,
    prompt: request.prompt,
    start,
    held: sequence.contextTokens,
    // Sentinel-marked template specials become control tokens; everything else is plain text.
    tokenize: (text) => tokenizePrompt(model, text),
  });
  const fullPrompt = plan.tokens;
  // LlamaCompletion puts the BOS in front itself.
  const promptTokens = fullPrompt.slice(start.length);
  const room = sequence.context.contextSize - fullPrompt.length;
  if (room < 1) {
    throw new ContextLengthExceededError(
      `view is ${fullPrompt.length} tokens; the context of adapter "${request.adapter}" holds ${sequence.context.contextSize}`,
    );
  }
  // What LlamaCompletion will keep: the matching prefix, minus the last prompt token, which is always
  // re-evaluated to produce the first new token's logits.
  const cached = Math.min(
    sequence.compareContextTokens(fullPrompt).firstDifferentIndex,
    fullPrompt.length - 1,
  );
  const meterBefore = sequence.tokenMeter.getState();
  const maxTokens = Math.min(request.maxTokens, room);
  const started = now();
  let firstTokenAt: number | undefined;
  const chunks: SampledChunk[] = [];
  let pendingTokens: Token[] = [];
  try {
    const { response, metadata } = await new LlamaCompletion({
      contextSequence: pauseBetweenTokens ? withPauses(sequence, pauseBetweenTokens) : sequence,
    }).generateCompletionWithMeta(promptTokens, {
      maxTokens,
      temperature: request.temperature,
      topP: request.topP,
      topK: request.topK,
      ...(request.seed === undefined ? {} : { seed: request.seed }),
      ...(grammar === undefined ? {} : { grammar }),
      ...(request.stop.length > 0 ? { customStopTriggers: [...request.stop] } : {}),
      signal: request.signal,
      stopOnAbortSignal: false,
      disableContextShift: true,
      contextShiftSize: 0,
      onToken: (tokens) => {
        firstTokenAt ??= now();
        pendingTokens = tokens;
      },
      // LlamaCompletion hands out each chunk's tokens, then their text.
      onTextChunk: (chunk) => {
        chunks.push({ tokens: pendingTokens, text: chunk });
        pendingTokens = [];
        if (chunk.length > 0) request.onTextDelta?.(chunk);
      },
    });
    const ended = now();
    slotTokens.retain(plan, chunks, sequence.contextTokens);
    const used = sequence.tokenMeter.diff(meterBefore);
    const prefillEnd = firstTokenAt ?? ended;
    return {
      text: response,
      finishReason: metadata.stopReason === "maxTokens" ? "length" : "stop",
      usage: {
        promptTokens: fullPrompt.length,
        cachedPromptTokens: cached,
        evaluatedPromptTokens: fullPrompt.length - cached,
        completionTokens: used.usedOutputTokens,
      },
      prefillMs: prefillEnd - started,
      decodeMs: ended - prefillEnd,
    };
  } catch (error) {
    slotTokens.forget();
    throw toEngineError(error, request.signal, "generation");
  }
}

/**
 * The sequence as LlamaCompletion sees it, its token loop paused by `pause` before each decode. LlamaCompletion's
 * `onToken` is not awaited, but it pulls tokens from `sequence.evaluate`, an async generator that decodes the
 * next token only when asked for it: awaiting `pause` before asking holds the decode, and the sequence's KV,
 * where it is. Every other member is the real sequence's, bound to it.
 */
function withPauses(sequence: LlamaContextSequence, pause: () => Promise<void>): LlamaContextSequence {
  type Evaluate = LlamaContextSequence["evaluate"];
  async function* evaluate(...args: Parameters<Evaluate>): ReturnType<Evaluate> {
    const tokens = sequence.evaluate(...args);
    try {
      // What the caller sends back (a replacement token) goes on to the real generator.
      let sent: Parameters<typeof tokens.next>[0];
      for (;;) {
        await pause();
        const next = await tokens.next(sent);
        if (next.done === true) return next.value;
        sent = yield next.value;
      }
    } finally {
      await tokens.return();
    }
  }
  return new Proxy(sequence, {
    get(target, key) {
      if (key === "evaluate") return evaluate;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * What a failed llama.cpp call on a sequence throws: the requester's cancel reason (or `cancelled`) when its
 * signal fired, a wire error as it is, anything else as `engine_failure` naming `what` failed.
 */
export function toEngineError(error: unknown, signal: AbortSignal, what: string): MolWireError {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof MolWireError
      ? reason
      : new CancelledError(`${what} cancelled`, { cause: reason });
  }
  if (error instanceof MolWireError) return error;
  return new EngineFailureError(`llama.cpp ${what} failed: ${String(error)}`, { cause: error });
}
