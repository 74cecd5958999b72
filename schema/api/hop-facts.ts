import { z } from "zod";
import { wireErrorCodeSchema } from "../wire/v2/index.ts";

// Hop facts the public API shows (`mol.placement`, `mol.takeovers`) and the timeline stores.

/** Where the edge sent a hop and why, with the nodes that failed it first (failover). */
export const placementSchema = z.object({
  reason: z.enum(["warm", "spill", "least-loaded", "queue-group"]),
  spilledFrom: z.string().optional(),
  attempts: z.array(z.object({ nodeId: z.string().optional(), code: wireErrorCodeSchema })),
});
export type Placement = z.infer<typeof placementSchema>;

/**
 * A node that died or stalled mid-answer, and the node that continued the answer from the text already streamed
 * (its prompt: the answer prompt plus that text). `atChar` is where in the answer text the new node took over.
 */
export const answerTakeoverSchema = z.object({
  fromNode: z.string(),
  toNode: z.string(),
  atChar: z.int().nonnegative(),
  code: wireErrorCodeSchema,
});
export type AnswerTakeover = z.infer<typeof answerTakeoverSchema>;
