import { z } from "zod";

export const conversationSchema = z.looseObject({
  id: z.string(),
  object: z.literal("conversation"),
  /** Unix seconds. */
  created_at: z.number(),
  metadata: z.record(z.string(), z.string()).nullish(),
});
export type Conversation = z.infer<typeof conversationSchema>;
