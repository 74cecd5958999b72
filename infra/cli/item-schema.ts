import { z } from "zod";
import { molSchema } from "../../schema/api/mol.ts";

/** A conversation item: a user message, or an assistant message with its `mol` facts. */
export const itemSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  role: z.string().optional(),
  status: z.string().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional(),
  // The edge's own schema; loose, so --json passes on facts a newer mesh adds.
  mol: molSchema.loose().optional(),
});
export type Item = z.infer<typeof itemSchema>;
