import { z } from "zod";
import { outputConstraintSchema, samplingSchema } from "../../../schema/wire/v2/index.ts";
import {
  contextMessageSchema,
  feedbackEventSchema,
  responseEchoSchema,
  toolResultSchema,
  type ContextMessage,
} from "../db/timeline-event.ts";
import type { TurnRecord } from "./turn-record.ts";

/**
 * One conversation item: a turn's user message or answer, an earlier message it came with, or (OpenAI's own
 * item types) a call the answer made (`callIndex`) or a tool result the turn's input was (`resultIndex`).
 */
export type StoredItem =
  | { role: "user" | "assistant"; turn: TurnRecord }
  | { role: "assistant"; turn: TurnRecord; callIndex: number }
  | { role: "user"; turn: TurnRecord; resultIndex: number }
  | { role: "user" | "assistant"; context: { id: string } & ContextMessage };

export interface ItemPage {
  items: StoredItem[];
  hasMore: boolean;
}

const sampling = samplingSchema.shape;

/** Per-request sampling overrides: only what the client set, so the specialist's own settings fill the rest. */
const samplingOverridesSchema = z.object({
  maxTokens: sampling.maxTokens.unwrap().optional(),
  temperature: sampling.temperature.unwrap().optional(),
  topP: sampling.topP.unwrap().optional(),
  topK: sampling.topK.unwrap().optional(),
  seed: sampling.seed,
  stop: sampling.stop.unwrap().optional(),
});
export type SamplingOverrides = z.infer<typeof samplingOverridesSchema>;

/** Who a turn's usage is reported under besides its tenant (usage by key and end user, see charge-turn.ts). */
export const usageAttributionSchema = z.object({
  /** The API key's id; `hook:<endpoint id>` for an inbound webhook's turn. */
  keyId: z.string().min(1),
  /** The request's `safety_identifier`, else its `user`. */
  endUser: z.string().max(256).optional(),
});
export type UsageAttribution = z.infer<typeof usageAttributionSchema>;
/**
 * Function tools and structured output for one turn: the tools the specialist's view shows (a change from the
 * ones it last showed appends `tools_changed`), and the constraint its answer is decoded under.
 */
const turnOutputFields = {
  tools: z
    .array(
      z.object({
        name: z.string(),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()),
      }),
    )
    .optional(),
  constraint: outputConstraintSchema.optional(),
};

/** The request's harness pin (`x-mol-harness`, `metadata.mol_harness`): a hash or a label the Worker checked. */
const harnessPinSchema = z.string().min(1).max(128);

/** The metadata key that pins a conversation (at creation) or a request to a harness: a hash or a label. */
export const HARNESS_PIN_KEY = "mol_harness";

/** A turn of a stored conversation, as the Worker sends it to the conversation's object. */
export const startTurnRequestSchema = z.object({
  conversationId: z.string().min(1),
  text: z.string(),
  /** Skip the route hop and answer with this specialist (`model: "mol:<label>"`). */
  forcedLabel: z.string().optional(),
  sampling: samplingOverridesSchema.optional(),
  /** Idempotency-Key and the hash of the request body it came with. */
  idempotency: z.object({ key: z.string(), requestHash: z.string() }).optional(),
  /** The API origin the turn came in on: a genui answer's render link points there. */
  apiOrigin: z.url().optional(),
  /** System instructions for this turn on; appended to the timeline only when they changed. */
  instructions: z.string().optional(),
  /** Earlier messages of an item array, placed before this turn's user message. */
  context: z.array(contextMessageSchema).optional(),
  /** The `function_call_output` items the turn's input was (`text` holds their view text). */
  toolResults: z.array(toolResultSchema).min(1).optional(),
  /** `previous_response_id`'s turn: it must be this conversation's latest (else 409, and the caller forks). */
  previousTurnId: z.string().optional(),
  /** `item_reference` ids: each must be an item of this conversation. */
  itemReferences: z.array(z.string()).optional(),
  /** What `GET /v1/responses/{id}` echoes. */
  response: responseEchoSchema.optional(),
  attribution: usageAttributionSchema.optional(),
  harnessPin: harnessPinSchema.optional(),
  ...turnOutputFields,
  /** `function_call_output` call ids the input itself did not make: an earlier turn here must have. */
  outsideCallIds: z.array(z.object({ callId: z.string(), index: z.int().nonnegative() })).optional(),
});
export type StartTurnRequest = z.infer<typeof startTurnRequestSchema>;

/** A `/v1/chat/completions` turn: the client sent the whole history, and nothing is stored. */
export const statelessTurnRequestSchema = z.object({
  /** Whose quota the turn's tokens count against. */
  tenantId: z.string().min(1),
  /**
   * The GPU node's KV slot key: the client's `prompt_cache_key`/`user` when it sent one, else unique to this
   * request, so independent requests never share (and queue on) one slot.
   */
  conversationKey: z.string().min(1),
  /** Node choice only (hash of the opening messages): the same chat leans to the same node. */
  placementKey: z.string().min(1).optional(),
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })),
  forcedLabel: z.string().optional(),
  sampling: samplingOverridesSchema.optional(),
  apiOrigin: z.url().optional(),
  attribution: usageAttributionSchema.optional(),
  harnessPin: harnessPinSchema.optional(),
  ...turnOutputFields,
});
export type StatelessTurnRequest = z.infer<typeof statelessTurnRequestSchema>;

export type TurnRefusal = { status: 400 | 404 | 409 | 422; code: string; message: string; param?: string };

/** A stored turn as the API reads it back (responses, items); `deleted` once `DELETE /v1/responses` ran. */
export interface StoredTurn {
  turn: TurnRecord;
  deleted: boolean;
  /** The earlier messages and instructions this turn was sent with (`input_items`). */
  context: ContextMessage[];
  instructions?: string;
}

/** A started turn: NDJSON of TurnStreamPart; cancelling it cancels the answer hop. */
export type StartTurnResult =
  { ok: true; stream: ReadableStream<Uint8Array> } | { ok: false; refusal: TurnRefusal };

/** A user's verdict on a stored turn, as the feedback route takes it (and the core parses it again, over RPC). */
export const turnFeedbackSchema = z.strictObject({
  rating: feedbackEventSchema.shape.rating,
  comment: feedbackEventSchema.shape.comment,
});
export type TurnFeedbackInput = z.infer<typeof turnFeedbackSchema>;

/** The turn with its feedback appended; or why not: no such (undeleted) turn, or one still answering. */
export type TurnFeedbackResult =
  { ok: true; turn: TurnRecord; counted: boolean } | { ok: false; error: "not_found" | "in_progress" };
