import { z } from "zod";
import {
  timingsSchema,
  toolCallSchema,
  usageSchema,
  wireErrorCodeSchema,
} from "../../../schema/wire/v2/index.ts";
import { answerTakeoverSchema, placementSchema } from "../../../schema/api/hop-facts.ts";
import { molHarnessChoiceSchema } from "../../../schema/api/mol.ts";

export {
  answerTakeoverSchema,
  placementSchema,
  type AnswerTakeover,
  type Placement,
} from "../../../schema/api/hop-facts.ts";

/**
 * The append-only timeline of one conversation. Every event belongs to a turn; a turn starts with
 * `user_message` (preceded by its `harness_changed`, `instructions` and `context_messages`, if any) and its
 * events arrive in this order: route_decision, then answer | turn_failed | turn_cancelled, then (after a genui
 * answer) genui_validation, then (after an answer) summary | summary_failed. The summary runs off the next turn's
 * critical path, so it may land after the next turn's events have begun. Tombstones (`response_deleted`,
 * `item_deleted`) name an earlier turn and may come at any time. Nothing is updated in place.
 */
const base = { turnId: z.string().min(1).max(64) };

/** A `function_call_output` as the client sent it: the call it answers and the output, as text. */
export const toolResultSchema = z.object({ callId: z.string().min(1), output: z.string() });
export type ToolResult = z.infer<typeof toolResultSchema>;

/** Timings the edge measured around a hop (ms, edge clock), next to what the node reported. */
export const edgeHopTimingsSchema = z.object({
  /** Request sent → reply complete. */
  totalMs: z.number().nonnegative(),
  /** Request sent → first text delta (answer hop only). */
  firstTokenMs: z.number().nonnegative().optional(),
});
export type EdgeHopTimings = z.infer<typeof edgeHopTimingsSchema>;

const hopFactsSchema = z.object({
  nodeId: z.string(),
  usage: usageSchema,
  nodeTimings: timingsSchema,
  edgeTimings: edgeHopTimingsSchema,
  placement: placementSchema.optional(),
  /** The adapter revision the node reported serving (its content fingerprint); absent on hops stored before. */
  revision: z.string().optional(),
});
export type HopFacts = z.infer<typeof hopFactsSchema>;

/**
 * What a `POST /v1/responses` asked for, kept so `GET /v1/responses/{id}` echoes it as the POST did. Informative
 * only: views never read it. `tools`, `tool_choice`, `text` are kept as sent (JSON).
 */
export const responseEchoSchema = z.object({
  model: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  temperature: z.number().optional(),
  topP: z.number().optional(),
  maxOutputTokens: z.number().optional(),
  tools: z.array(z.unknown()).optional(),
  toolChoice: z.unknown().optional(),
  parallelToolCalls: z.boolean().optional(),
  text: z.unknown().optional(),
  instructions: z.string().optional(),
  background: z.boolean().optional(),
  previousResponseId: z.string().optional(),
  /** False when the response was made without `conversation` (an implicit one: `conversation` is null). */
  inConversation: z.boolean().optional(),
});
export type ResponseEcho = z.infer<typeof responseEchoSchema>;

export const userMessageEventSchema = z.object({
  ...base,
  type: z.literal("user_message"),
  text: z.string(),
  /** Content hash of the harness document this turn runs under. */
  harnessHash: z.string(),
  /** How that harness was chosen (`mol.harness` less the hash); absent on turns stored before the registry. */
  harness: molHarnessChoiceSchema.optional(),
  /** Forced specialist (chat completions `model: "mol:<label>"`); skips the route hop. */
  forcedLabel: z.string().optional(),
  response: responseEchoSchema.optional(),
  /** The `function_call_output` items this turn's input was (`text` is their view text); items list them. */
  toolResults: z.array(toolResultSchema).min(1).optional(),
});

/**
 * The system instructions from this turn on (`instructions`, or system/developer items). Appended before the
 * turn's user message only when they differ from the last ones: views get a system line at the end, so the
 * prefix (and the KV cache) stays.
 */
export const instructionsEventSchema = z.object({
  ...base,
  type: z.literal("instructions"),
  text: z.string(),
});

/**
 * An earlier message of an item array: `text` is what the views show; a `function_call` (assistant) or a
 * `function_call_output` (user) keeps its fields too, so the items list shows it as OpenAI's item.
 */
export const contextMessageSchema = z.object({
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  /** A call as the client sent it back (its id is the call's `call_id`, which clients may make long). */
  toolCall: z.object({ id: z.string().min(1), name: z.string(), arguments: z.string() }).optional(),
  toolResult: toolResultSchema.optional(),
});
export type ContextMessage = z.infer<typeof contextMessageSchema>;

/** Earlier messages a client sent in an item array (user and assistant), placed before the turn's user line. */
export const contextMessagesEventSchema = z.object({
  ...base,
  type: z.literal("context_messages"),
  messages: z.array(contextMessageSchema),
});

/**
 * Tombstones. Nothing is removed from the timeline and views only grow at their end, so a deleted item or
 * response stays in the model's views (and the node's KV) until compaction moves past it; the API stops
 * showing it, and a deleted response can no longer be retrieved or chained from.
 */
export const responseDeletedEventSchema = z.object({
  ...base,
  type: z.literal("response_deleted"),
});

export const itemDeletedEventSchema = z.object({
  ...base,
  type: z.literal("item_deleted"),
  itemId: z.string(),
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
      /** The router adapter as the harness named it (`label` or `label@<rev>`); absent on hops stored before. */
      adapter: z.string().optional(),
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
  /**
   * How long the turn waited for the previous turn's summary before its user line was appended (ms, edge clock):
   * only a turn routed to another specialist than the previous one waits (the `bounded` summary wait), and at most
   * its bound.
   */
  summaryWaitMs: z.number().nonnegative().optional(),
  /**
   * True when the previous turn's summary was still running as this turn's user line went in, under the
   * harness's `interim` summary wait: the other specialists' views got that turn's interim line (no wait).
   */
  summaryInterim: z.literal(true).optional(),
});

export const answerEventSchema = z.object({
  ...base,
  type: z.literal("answer"),
  adapter: z.string(),
  revision: z.string(),
  /** The decoded text; for function calls, the calls as the model wrote them (marker and JSON). */
  text: z.string(),
  finishReason: z.enum(["stop", "length", "tool_calls"]),
  /** With finishReason `tool_calls`: each call, its `arguments` valid against its tool's schema. */
  toolCalls: z.array(toolCallSchema).min(1).optional(),
  hop: hopFactsSchema,
  /** Mid-stream takeovers, in order; absent when one node wrote the whole answer. */
  takeovers: z.array(answerTakeoverSchema).optional(),
  /**
   * A later answer of the same turn (a repair step's, after a check rejected the one before): it is the turn's
   * answer from now on, and the answering specialist's view shows it after what came before.
   */
  revises: z.literal(true).optional(),
});

export const turnFailedEventSchema = z.object({
  ...base,
  type: z.literal("turn_failed"),
  hop: z.enum(["route", "answer"]),
  /** The program step that failed, when it was not the answer step itself (see the harness's turn program). */
  step: z.string().max(32).optional(),
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

/**
 * The edge validator's verdict on a genui answer (the component module in it). Views ignore it; the API shows it
 * as `mol.genui`, and a harness search can score a variant by it. A valid component is stored for the tenant;
 * `renderUrl` is its capability link (token in the URL, only its hash stored with the component).
 */
export const genuiValidationEventSchema = z.object({
  ...base,
  type: z.literal("genui_validation"),
  status: z.enum(["valid", "rejected"]),
  findings: z.int().nonnegative(),
  /** The first findings as `rule line:column message` lines, clipped; empty when valid. */
  summary: z.string().max(2048),
  componentId: z.string().max(64).optional(),
  renderUrl: z.string().max(2048).optional(),
  /** Unix seconds. */
  renderUrlExpiresAt: z.int().nonnegative().optional(),
});

/**
 * The function tools of the turn differ from the ones the views last showed (or appear for the first time).
 * Comes right after the turn's user_message; every specialist view appends the tools block (see
 * schema/harness/tools-block.ts), so a change of tools only ever adds to the end of a view.
 */
export const toolsChangedEventSchema = z.object({
  ...base,
  type: z.literal("tools_changed"),
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()),
    }),
  ),
});

/** Longest note a step may show the answering specialist. */
export const MAX_STEP_NOTE_CHARS = 2048;

/**
 * What a step of the turn's program found or did, beside the events it already has (route, answer, summary): a
 * check's verdict, with the message a repair step answers to. `note`, when present, is shown to the turn's
 * specialist: its view gets it as a user line after what the turn holds so far, so a next answer of the turn is
 * written knowing it. `data` is for the API and for harness search; views never read it.
 */
export const stepEventSchema = z.object({
  ...base,
  type: z.literal("step"),
  /** The step's name in the program (its kind, unless the program named it). */
  step: z.string().min(1).max(32),
  kind: z.string().min(1).max(32),
  verdict: z.enum(["pass", "fail"]).optional(),
  note: z.string().max(MAX_STEP_NOTE_CHARS).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

/** Most changed paths a `harness_changed` event lists. */
export const MAX_HARNESS_CHANGED_PATHS = 64;

/**
 * The turn runs under another harness document than the conversation's previous turn did (a label moved, a pin,
 * a rollback). Comes first in the turn's opening, before its user message. Views ignore it: they are a function of
 * the timeline and the harness, rebuilt whole under the new one, so this event only makes the change visible in
 * the timeline (and to the API) where it happened. `changed` lists where the documents differ, as JSON pointers cut
 * to three segments (`/specialists/chat/systemPrompt`), each once; absent when the edge did not hold the previous
 * document at hand.
 */
export const harnessChangedEventSchema = z.object({
  ...base,
  type: z.literal("harness_changed"),
  from: z.string(),
  to: z.string(),
  changed: z.array(z.string()).max(MAX_HARNESS_CHANGED_PATHS).optional(),
});

/** Longest comment a user's feedback may carry. */
export const MAX_FEEDBACK_COMMENT_CHARS = 2048;

/**
 * A user's verdict on a stored turn (`POST /v1/responses/{id}/feedback`), appended after the turn, possibly long
 * after. Views ignore it (a line added to an old turn would rewrite the middle of the views); the API shows the
 * turn's latest as `mol.feedback`, and negative feedback counts for the rollout guard once per turn.
 */
export const feedbackEventSchema = z.object({
  ...base,
  type: z.literal("feedback"),
  rating: z.enum(["positive", "negative"]),
  comment: z.string().max(MAX_FEEDBACK_COMMENT_CHARS).optional(),
});

export const timelineEventSchema = z.discriminatedUnion("type", [
  userMessageEventSchema,
  routeDecisionEventSchema,
  answerEventSchema,
  turnFailedEventSchema,
  turnCancelledEventSchema,
  summaryEventSchema,
  summaryFailedEventSchema,
  genuiValidationEventSchema,
  instructionsEventSchema,
  contextMessagesEventSchema,
  responseDeletedEventSchema,
  itemDeletedEventSchema,
  toolsChangedEventSchema,
  stepEventSchema,
  harnessChangedEventSchema,
  feedbackEventSchema,
]);
export type TimelineEvent = z.infer<typeof timelineEventSchema>;
export type TimelineEventType = TimelineEvent["type"];
export type TimelineEventOf<T extends TimelineEventType> = Extract<TimelineEvent, { type: T }>;

/** An event as stored: its place in the timeline is `seq` (1, 2, 3, … with no gaps); `createdAt` is unix ms. */
export type StoredTimelineEvent = TimelineEvent & { seq: number; createdAt: number };
