import { z } from "zod";

const count = z.int().nonnegative();

/** Token accounting of one hop, as measured by the engine. */
export const usageSchema = z.object({
  promptTokens: count,
  /** Prompt tokens whose KV was already in the (conversation, adapter) slot and was reused. */
  cachedPromptTokens: count,
  /** Prompt tokens the engine actually evaluated for this hop. */
  evaluatedPromptTokens: count,
  completionTokens: count,
});
export type Usage = z.infer<typeof usageSchema>;

const millis = z.number().nonnegative();

/** Timings of one hop on the node, in milliseconds. */
export const timingsSchema = z.object({
  queueMs: millis,
  prefillMs: millis,
  decodeMs: millis,
  totalMs: millis,
});
export type Timings = z.infer<typeof timingsSchema>;
