import { z } from "zod";
import { wireErrorPayloadSchema } from "./error-code.ts";
import { answerFinishReasonSchema } from "./finish-reason.ts";
import { toolCallSchema } from "./output-constraint.ts";
import { timingsSchema, usageSchema } from "./usage.ts";
import { wireVersionSchema } from "./version.ts";

/**
 * Parts of a streamed answer. Core NATS is at-most-once, so every part carries `seq` (0, 1, 2, …): the
 * receiver detects a lost part as a gap instead of silently showing a hole in the answer. The stream ends with
 * exactly one `finish` or `error` part, followed by an empty NATS message (the request-many sentinel).
 */
const partBase = { version: wireVersionSchema, seq: z.int().nonnegative() };

export const startPartSchema = z.object({
  ...partBase,
  type: z.literal("start"),
  requestId: z.string(),
  nodeId: z.string(),
  adapter: z.string(),
  /** Revision id (content fingerprint) of the adapter that answers. */
  revision: z.string(),
});

export const textDeltaPartSchema = z.object({
  ...partBase,
  type: z.literal("text-delta"),
  delta: z.string(),
});

/**
 * A slice of one function call's arguments (JSON text) as it is decoded, under a `tools` constraint. Calls
 * are numbered from 0 in order; `id` and `name` repeat on every delta of a call, so any delta stands alone.
 */
export const toolCallDeltaPartSchema = z.object({
  ...partBase,
  type: z.literal("tool-call-delta"),
  index: z.int().nonnegative(),
  id: z.string(),
  name: z.string(),
  argumentsDelta: z.string(),
});

export const finishPartSchema = z.object({
  ...partBase,
  type: z.literal("finish"),
  finishReason: answerFinishReasonSchema,
  /** The whole text answer (the text deltas joined), so a receiver can check what it assembled. */
  text: z.string(),
  /**
   * With finishReason `tool_calls`: every call, each one's `arguments` equal to its deltas joined and valid
   * against its tool's schema. Absent otherwise (a call cut off by `length` has only its deltas).
   */
  toolCalls: z.array(toolCallSchema).min(1).optional(),
  usage: usageSchema,
  timings: timingsSchema,
});

/**
 * Sent by the node about once a second while the answer runs, text or not (a long prefill sends none), so the
 * receiver's stall timeout can be a few seconds: a node that died is noticed by its silence, not by the answer's
 * own deadline. Carries nothing; it is never shown.
 */
export const keepalivePartSchema = z.object({
  ...partBase,
  type: z.literal("keepalive"),
});

/** How often a node sends {@link keepalivePartSchema} parts; the edge's stall timeout is a few of these. */
export const STREAM_KEEPALIVE_MS = 1_000;

export const errorPartSchema = z.object({
  ...partBase,
  type: z.literal("error"),
  error: wireErrorPayloadSchema,
});

export const streamPartSchema = z.discriminatedUnion("type", [
  startPartSchema,
  textDeltaPartSchema,
  toolCallDeltaPartSchema,
  finishPartSchema,
  keepalivePartSchema,
  errorPartSchema,
]);
export type StreamPart = z.infer<typeof streamPartSchema>;
export type StartPart = z.infer<typeof startPartSchema>;
export type TextDeltaPart = z.infer<typeof textDeltaPartSchema>;
export type ToolCallDeltaPart = z.infer<typeof toolCallDeltaPartSchema>;
export type FinishPart = z.infer<typeof finishPartSchema>;
export type ErrorPart = z.infer<typeof errorPartSchema>;
export type KeepalivePart = z.infer<typeof keepalivePartSchema>;
