import { z } from "zod";

const count = z.number().nonnegative();

/**
 * One `data:` payload of a streamed `/v1/completions` response, as vLLM and llama-server send it. Only the
 * fields molmesh reads are declared; the rest (id, created, logprobs, stop_reason, …) pass unchecked.
 */
export const completionChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().optional(),
        text: z.string().nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: z
    .object({
      prompt_tokens: count,
      completion_tokens: count,
      // vLLM only fills this with --enable-prompt-tokens-details; otherwise absent or null.
      prompt_tokens_details: z.object({ cached_tokens: count.nullish() }).nullish(),
    })
    .nullish(),
  // llama-server extras.
  timings: z
    .object({ cache_n: count.optional(), prompt_n: count.optional(), predicted_n: count.optional() })
    .nullish(),
  tokens_cached: count.nullish(),
});
export type CompletionChunk = z.infer<typeof completionChunkSchema>;
