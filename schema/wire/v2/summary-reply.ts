import { z } from "zod";
import { errorReplySchema } from "./error-reply.ts";
import { finishReasonSchema } from "./finish-reason.ts";
import { timingsSchema, usageSchema } from "./usage.ts";
import { wireVersionSchema } from "./version.ts";

export const summaryResultSchema = z.object({
  version: wireVersionSchema,
  type: z.literal("summary-result"),
  requestId: z.string(),
  nodeId: z.string(),
  text: z.string(),
  finishReason: finishReasonSchema,
  usage: usageSchema,
  timings: timingsSchema,
});
export type SummaryResult = z.infer<typeof summaryResultSchema>;

export const summaryReplySchema = z.discriminatedUnion("type", [summaryResultSchema, errorReplySchema]);
export type SummaryReply = z.infer<typeof summaryReplySchema>;
