import type { Usage } from "../../../../schema/wire/v1/index.ts";
import type { CompletionChunk } from "./completion-chunk-schema.ts";

export interface ObservedUsage {
  /** The last `usage` object of the stream (vLLM: the `choices: []` chunk; llama-server: the finish chunk). */
  usage?: NonNullable<CompletionChunk["usage"]>;
  /** llama-server's native counters, when present. */
  timings?: NonNullable<CompletionChunk["timings"]>;
  tokensCached?: number;
  /** Text-bearing chunks: both servers send one per generated token. */
  textChunks: number;
}

const toCount = (value: number): number => Math.max(0, Math.trunc(value));

/** Prefers the OpenAI usage; falls back to what llama-server's own counters say. */
export function readCompletionUsage(observed: ObservedUsage): Usage {
  const { usage, timings } = observed;
  const reportedCached =
    usage?.prompt_tokens_details?.cached_tokens ?? timings?.cache_n ?? observed.tokensCached;
  if (usage !== undefined) {
    const promptTokens = toCount(usage.prompt_tokens);
    const cachedPromptTokens = Math.min(promptTokens, toCount(reportedCached ?? 0));
    return {
      promptTokens,
      cachedPromptTokens,
      evaluatedPromptTokens: promptTokens - cachedPromptTokens,
      completionTokens: toCount(usage.completion_tokens),
    };
  }
  // No usage chunk (an old server, or usage not enabled): the prompt size is unknown unless timings tell.
  const cachedPromptTokens = toCount(reportedCached ?? 0);
  const evaluatedPromptTokens = toCount(timings?.prompt_n ?? 0);
  return {
    promptTokens: cachedPromptTokens + evaluatedPromptTokens,
    cachedPromptTokens,
    evaluatedPromptTokens,
    completionTokens: toCount(timings?.predicted_n ?? observed.textChunks),
  };
}
