import { z } from "zod";
import { errorReplySchema } from "./error-reply.ts";
import { timingsSchema, usageSchema } from "./usage.ts";
import { wireVersionSchema } from "./version.ts";

export const routeResultSchema = z.object({
  version: wireVersionSchema,
  type: z.literal("route-result"),
  requestId: z.string(),
  nodeId: z.string(),
  /** Always one of the request's labels: the grammar admits nothing else. */
  label: z.string(),
  /** Everything decoded, reasoning prefix included. */
  rawText: z.string(),
  /**
   * The engine's probability of `label` (0–1) among the request's labels; absent from engines that give none.
   * Optional so nodes of an older build still validate.
   */
  confidence: z.number().min(0).max(1).optional(),
  usage: usageSchema,
  timings: timingsSchema,
});
export type RouteResult = z.infer<typeof routeResultSchema>;

export const routeReplySchema = z.discriminatedUnion("type", [routeResultSchema, errorReplySchema]);
export type RouteReply = z.infer<typeof routeReplySchema>;
