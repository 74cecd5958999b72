import { z } from "zod";
import { hopRequestBaseSchema } from "./hop-request-base.ts";
import { outputConstraintSchema } from "./output-constraint.ts";
import { samplingSchema } from "./sampling.ts";

/**
 * Strict: a field this node does not know is refused (`bad_request`), never silently dropped, so a request
 * whose output must be constrained can never be answered unconstrained by a node that predates the field.
 * Senders choose nodes whose heartbeat lists the feature (node-status `features`).
 */
export const answerRequestSchema = z.strictObject({
  ...hopRequestBaseSchema.shape,
  type: z.literal("answer"),
  sampling: samplingSchema.default(samplingSchema.parse({})),
  /** Absent: free text. */
  constraint: outputConstraintSchema.optional(),
});
export type AnswerRequest = z.infer<typeof answerRequestSchema>;
export type AnswerRequestInput = z.input<typeof answerRequestSchema>;
