import { z } from "zod";
import { wireVersionSchema } from "./version.ts";

/** Published on the cancel subject; the node running `requestId` stops it promptly. */
export const cancelRequestSchema = z.object({
  version: wireVersionSchema,
  type: z.literal("cancel"),
  requestId: z.string().min(1).max(128),
  reason: z.string().max(200).optional(),
});
export type CancelRequest = z.infer<typeof cancelRequestSchema>;
