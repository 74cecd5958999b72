import { z } from "zod";
import { hopRequestBaseSchema } from "./hop-request-base.ts";

/** Summaries are short by contract: they are what other specialists see of a turn. */
export const MAX_SUMMARY_TOKENS = 192;

/** Summaries decode greedily (deterministic), so there are no sampling settings to send. */
export const summaryRequestSchema = hopRequestBaseSchema.extend({
  type: z.literal("summary"),
  maxTokens: z.int().min(1).max(MAX_SUMMARY_TOKENS).default(MAX_SUMMARY_TOKENS),
});
export type SummaryRequest = z.infer<typeof summaryRequestSchema>;
export type SummaryRequestInput = z.input<typeof summaryRequestSchema>;
