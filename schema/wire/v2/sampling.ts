import { z } from "zod";

/** Default completion budget of an answer hop, in tokens. */
export const DEFAULT_ANSWER_MAX_TOKENS = 512;
/** Hard ceiling on any single hop's completion, in tokens. */
export const MAX_COMPLETION_TOKENS = 8192;

export const samplingSchema = z.object({
  maxTokens: z.int().min(1).max(MAX_COMPLETION_TOKENS).default(DEFAULT_ANSWER_MAX_TOKENS),
  /** 0 selects greedy decoding. */
  temperature: z.number().min(0).max(2).default(0.7),
  topP: z.number().gt(0).max(1).default(0.95),
  topK: z.int().min(0).max(1000).default(40),
  seed: z
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional(),
  stop: z.array(z.string().min(1).max(64)).max(8).default([]),
});
export type Sampling = z.infer<typeof samplingSchema>;
export type SamplingInput = z.input<typeof samplingSchema>;
