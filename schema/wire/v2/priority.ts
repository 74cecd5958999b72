import { z } from "zod";

/**
 * What a generate request is for, as the node schedules it. `route` and `answer` are latency-critical: a client
 * waits on them. `summary` and `background` are not: the node admits them in a lane of their own (when it has one),
 * runs them on KV slots of their own so the conversation's next turn never waits for their slot, and holds them back
 * between tokens while latency work runs (gpu-nodes/src/engine/hop-priority.ts). The class is also the `hop` label of
 * the node's metrics and spans.
 */
export const PRIORITY_CLASSES = ["route", "answer", "summary", "background"] as const;
export const priorityClassSchema = z.enum(PRIORITY_CLASSES);
export type PriorityClass = z.infer<typeof priorityClassSchema>;

/** Whether a client waits on work of this class. */
export function isLatencyClass(priority: PriorityClass): boolean {
  return priority === "route" || priority === "answer";
}
