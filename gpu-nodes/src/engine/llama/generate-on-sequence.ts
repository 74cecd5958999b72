import {
  LlamaCompletion,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import {
  CancelledError,
  ContextLengthExceededError,
  EngineFailureError,
  MolWireError,
} from "../../../../schema/wire/v1/index.ts";
import type { EngineGenerateRequest, EngineGenerateResult } from "../engine.ts";

export interface SequenceGeneration {
  sequence: LlamaContextSequence;
  grammar: LlamaGrammar | undefined;
  request: EngineGenerateRequest;
  now: () => number;
}

/**
 * A view's tokens as the engine evaluates them; the router trainer tokenizes its corpus with this too, so it
 * trains on exactly the tokens the node will see.
 */
export function tokenizeView(
  model: LlamaModel,
  prompt: string,
): { promptTokens: Token[]; fullPrompt: Token[] } {
  const promptTokens = model.tokenize(prompt, false, "trimLeadingSpace");
  const bos = model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
  return { promptTokens, fullPrompt: bos == null ? promptTokens : [bos, ...promptTokens] };
}

/**
 * Runs one completion on a KV slot. llama.cpp keeps the part of the sequence that matches the new prompt and
 * evaluates only the rest; the reusable prefix is read from the sequence state right before the call, under
 * the slot's lease, so it is exactly what llama.cpp skips.
 */
export async function generateOnSequence({
  sequence,
  grammar,
  request,
  now,
}: SequenceGeneration): Promise<Omit<EngineGenerateResult, "queueMs">> {
  const { promptTokens, fullPrompt } = tokenizeView(sequence.model, request.prompt);
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
  try {
    const { response, metadata } = await new LlamaCompletion({
      contextSequence: sequence,
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
      onToken: () => {
        firstTokenAt ??= now();
      },
      onTextChunk: (chunk) => {
        if (chunk.length > 0) request.onTextDelta?.(chunk);
      },
    });
    const ended = now();
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
    if (request.signal.aborted) {
      const reason: unknown = request.signal.reason;
      throw reason instanceof MolWireError
        ? reason
        : new CancelledError("generation cancelled", { cause: reason });
    }
    if (error instanceof MolWireError) throw error;
    throw new EngineFailureError(`llama.cpp generation failed: ${String(error)}`, { cause: error });
  }
}
