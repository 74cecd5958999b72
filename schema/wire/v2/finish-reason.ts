import { z } from "zod";

/** `stop`: the model ended (EOS, stop string, or grammar complete); `length`: the token budget ran out. */
export const finishReasonSchema = z.enum(["stop", "length"]);
export type FinishReason = z.infer<typeof finishReasonSchema>;

/** An answer may also end in function calls (its finish part then carries `toolCalls`). */
export const answerFinishReasonSchema = z.enum(["stop", "length", "tool_calls"]);
export type AnswerFinishReason = z.infer<typeof answerFinishReasonSchema>;
