import { z } from "zod";
import { molSchema } from "../../schema/api/mol.ts";

/** The final Response a stream ends with (`response.completed`, `.incomplete` or `.failed`). */
export const responseSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  usage: z
    .looseObject({
      input_tokens: z.number(),
      input_tokens_details: z.looseObject({ cached_tokens: z.number() }).optional(),
      output_tokens: z.number(),
    })
    .nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string() }).nullish(),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullish(),
  // The edge's own schema; loose, so --json passes on facts a newer mesh adds.
  mol: molSchema.loose().optional(),
});
export type MeshResponse = z.infer<typeof responseSchema>;
