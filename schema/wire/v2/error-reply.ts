import { z } from "zod";
import { wireErrorPayloadSchema } from "./error-code.ts";
import { wireVersionSchema } from "./version.ts";

/** Reply to a single-message hop (route, summary) that failed. */
export const errorReplySchema = z.object({
  version: wireVersionSchema,
  type: z.literal("error"),
  /** Absent only when the request was too malformed to read its id. */
  requestId: z.string().optional(),
  nodeId: z.string().optional(),
  error: wireErrorPayloadSchema,
});
export type ErrorReply = z.infer<typeof errorReplySchema>;
