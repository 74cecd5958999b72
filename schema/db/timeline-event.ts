import { z } from "zod";
import { timingsSchema, usageSchema, wireErrorCodeSchema } from "../wire/v1/index.ts";

/**
 * The append-only timeline of one conversation. Every event belongs to a turn; a turn starts with
 * `user_message` and its events arrive in this order: route_decision, then answer | turn_failed |
 * turn_cancelled, then (after an answer) summary | summary_failed. Nothing is updated in place.
 */
const base = { turnId: z.string().min(1).max(64) };

/** Timings the edge measured around a hop (ms, edge clock), next to what the node reported. */
export const edgeHopTimingsSchema = z.object({
  /** Request sent → reply complete. */
  totalMs: z.number().nonnegative(),
  /** Request sent → first text delta (answer hop only). */
  firstTokenMs: z.number().nonnegative().optional(),
});
export type EdgeHopTimings = z.infer<typeof edgeHopTimingsSchema>;

/** Where the edge sent a hop and why, with the nodes that failed it first (failover). */
export const placementSchema = z.object({
  reason: z.enum(["warm", "spill", "least-loaded", "queue-group"]),
  spilledFrom: z.string().optional(),
  attempts: z.array(z.object({ nodeId: z.string().optional(), code: wireErrorCodeSchema })),
});
export type Placement = z.infer<typeof placementSchema>;

const hopFactsSchema = z.object({
  nodeId: z.string(),
  usage: usageSchema,
  nodeTimings: timingsSchema,
  edgeTimings: edgeHopTimingsSchema,
  placement: placementSchema.optional(),
});
export type HopFacts = z.infer<typeof hopFactsSchema>;

export const userMessageEventSchema = z.object({
  ...base,
  type: z.literal("user_message"),
  text: z.string(),
  /** Content hash of the harness document this turn runs under. */
  harnessHash: z.string(),
  /** Forced specialist (chat completions `model: "mol:<label>"`); skips the route hop. */
  forcedLabel: z.string().optional(),
});

export const routeDecisionEventSchema = z.object({
  ...base,
  type: z.literal("route_decision"),
  /** The specialist the turn goes to (after any fallback). */
  label: z.string(),
  /** How the label was chosen. */
  source: z.enum(["router", "forced", "fallback"]),
  /** Present when the router answered. */
  router: hopFactsSchema
    .extend({
      rawText: z.string(),
      /** The engine's probability of the router's label, when it gave one. */
      confidence: z.number().min(0).max(1).optional(),
      /** The router's own label, when its confidence was under `router.minConfidence` and the previous specialist was kept. */
      lowConfidenceLabel: z.string().optional(),
    })
    .optional(),
  /** Present when source = fallback: why the router's answer was not used. */
  fallback: z
    .object({ code: wireErrorCodeSchema, message: z.string(), to: z.enum(["previous", "default"]) })
    .optional(),
});

export const answerEventSchema = z.object({
  ...base,
  type: z.literal("answer"),
  adapter: z.string(),
  revision: z.string(),
  text: z.string(),
  finishReason: z.enum(["stop", "length"]),
  hop: hopFactsSchema,
});

export const turnFailedEventSchema = z.object({
  ...base,
  type: z.literal("turn_failed"),
  hop: z.enum(["route", "answer"]),
  code: wireErrorCodeSchema,
  message: z.string(),
});

export const turnCancelledEventSchema = z.object({
  ...base,
  type: z.literal("turn_cancelled"),
  reason: z.string(),
  /** Characters of answer text the client had received before it went away. */
  partialChars: z.int().nonnegative(),
});

export const summaryEventSchema = z.object({
  ...base,
  type: z.literal("summary"),
  adapter: z.string(),
  text: z.string(),
  hop: hopFactsSchema,
});

export const summaryFailedEventSchema = z.object({
  ...base,
  type: z.literal("summary_failed"),
  adapter: z.string(),
  code: wireErrorCodeSchema,
  message: z.string(),
});

export const timelineEventSchema = z.discriminatedUnion("type", [
  userMessageEventSchema,
  routeDecisionEventSchema,
  answerEventSchema,
  turnFailedEventSchema,
  turnCancelledEventSchema,
  summaryEventSchema,
  summaryFailedEventSchema,
]);
export type TimelineEvent = z.infer<typeof timelineEventSchema>;
export type TimelineEventType = TimelineEvent["type"];
export type TimelineEventOf<T extends TimelineEventType> = Extract<TimelineEvent, { type: T }>;

/** An event as stored: its place in the timeline is `seq` (1, 2, 3, … with no gaps); `createdAt` is unix ms. */
export type StoredTimelineEvent = TimelineEvent & { seq: number; createdAt: number };
