import { z } from "zod";

/** `stop`: the model ended (EOS, stop string, or grammar complete); `length`: the token budget ran out. */
export const finishReasonSchema = z.enum(["stop", "length"]);
export type FinishReason = z.infer<typeof finishReasonSchema>;
