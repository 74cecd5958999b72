import { z } from "zod";
import { hopRequestBaseSchema } from "./hop-request-base.ts";
import { samplingSchema } from "./sampling.ts";

export const answerRequestSchema = hopRequestBaseSchema.extend({
  type: z.literal("answer"),
  sampling: samplingSchema.default(samplingSchema.parse({})),
});
export type AnswerRequest = z.infer<typeof answerRequestSchema>;
export type AnswerRequestInput = z.input<typeof answerRequestSchema>;
