import { z } from "zod";
import { adapterNameSchema } from "./adapter-name.ts";
import { wireErrorPayloadSchema } from "./error-code.ts";
import { answerFinishReasonSchema } from "./finish-reason.ts";
import { toolCallSchema } from "./output-constraint.ts";
import { timingsSchema, usageSchema } from "./usage.ts";
import { wireVersionSchema } from "./version.ts";

/** The engine's token ids of a completion, with the logprob the sampler drew each one at. */
export const generatedTokensSchema = z.object({
  /** The prompt as the engine tokenized it (what the completion is conditioned on). */
  promptIds: z.array(z.int().nonnegative()),
  ids: z.array(z.int().nonnegative()),
  logprobs: z.array(z.number()),
  /** With `return.topLogprobs`: per position, the most likely tokens and their logprobs, best first. */
  top: z.array(z.array(z.object({ id: z.int().nonnegative(), logprob: z.number() }))).optional(),
});
export type GeneratedTokens = z.infer<typeof generatedTokensSchema>;

/** What a finished generation says about its output: the `result` message's body and the `finish` part's. */
export const generateOutcomeSchema = z.object({
  /** `tool_calls`: the output is function calls (see `toolCalls`). */
  finishReason: answerFinishReasonSchema,
  /** The whole text (a stream's text deltas joined); under a choice, the reasoning and the choice. */
  text: z.string(),
  /**
   * With finishReason `tool_calls`: every call, each one's `arguments` equal to its deltas joined and valid against
   * its tool's schema. Absent otherwise (a call cut off by `length` has only its deltas).
   */
  toolCalls: z.array(toolCallSchema).min(1).optional(),
  /** Under a choice constraint: the choice (always one of the request's) and, where asked and known, every choice's probability. */
  choice: z
    .object({
      value: z.string(),
      probabilities: z.record(z.string(), z.number().min(0).max(1)).optional(),
    })
    .optional(),
  tokens: generatedTokensSchema.optional(),
  usage: usageSchema,
  timings: timingsSchema,
});
export type GenerateOutcome = z.infer<typeof generateOutcomeSchema>;

/** Who served a request: the node, and the adapter revision that generated (its versioned name). */
const servedBySchema = {
  requestId: z.string(),
  nodeId: z.string(),
  adapter: adapterNameSchema,
  /** Content fingerprint of the adapter's LoRA (or of the base, for an adapter on the bare base). */
  revision: z.string(),
};

/** The reply to a request with `return.stream` false. */
export const generateResultSchema = z.object({
  version: wireVersionSchema,
  type: z.literal("result"),
  ...servedBySchema,
  ...generateOutcomeSchema.shape,
});
export type GenerateResult = z.infer<typeof generateResultSchema>;

/** The reply to a request that failed, streamed or not (streamed: see the `error` part). */
export const errorReplySchema = z.object({
  version: wireVersionSchema,
  type: z.literal("error"),
  /** Absent only when the request was too malformed to read its id. */
  requestId: z.string().optional(),
  nodeId: z.string().optional(),
  error: wireErrorPayloadSchema,
});
export type ErrorReply = z.infer<typeof errorReplySchema>;

export const generateReplySchema = z.discriminatedUnion("type", [generateResultSchema, errorReplySchema]);
export type GenerateReply = z.infer<typeof generateReplySchema>;

/**
 * Parts of a streamed reply (`return.stream`). Core NATS is at-most-once, so every part carries `seq` (0, 1, 2, …):
 * the receiver detects a lost part as a gap instead of silently showing a hole in the output. The stream starts with
 * `start` (sent as soon as the node accepts the request) and ends with exactly one `finish` or `error` part,
 * followed by an empty NATS message (the request-many sentinel).
 */
const partBase = { version: wireVersionSchema, seq: z.int().nonnegative() };

export const startPartSchema = z.object({ ...partBase, type: z.literal("start"), ...servedBySchema });

export const textDeltaPartSchema = z.object({
  ...partBase,
  type: z.literal("text-delta"),
  delta: z.string(),
});

/**
 * A slice of one function call's arguments (JSON text) as it is decoded, under a `tools` constraint. Calls are
 * numbered from 0 in order; `id` and `name` repeat on every delta of a call, so any delta stands alone.
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
  ...generateOutcomeSchema.shape,
});

/**
 * Sent by the node about once a second while a streamed request runs, text or not (a long prefill sends none), so
 * the receiver's stall timeout can be a few seconds: a node that died is noticed by its silence, not by the
 * request's own deadline. Carries nothing; it is never shown.
 */
export const keepalivePartSchema = z.object({ ...partBase, type: z.literal("keepalive") });

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
