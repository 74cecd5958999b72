import type { TurnMol, TurnRecord } from "../../conversation/turn-record.ts";
import { mapTurnErrorToApiError, toPublicError, type PublicError } from "../errors/api-error.ts";
import {
  formatOutputText,
  readAssistantItemStatus,
  type OutputTextPart,
  type ItemStatus,
} from "./format-item.ts";
import { formatMol, readModelName } from "./format-mol.ts";
import { sumCriticalPathUsage } from "./sum-critical-path-usage.ts";

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

export interface ResponseOutputMessage {
  type: "message";
  id: string;
  status: ItemStatus;
  role: "assistant";
  content: OutputTextPart[];
}

export interface ResponseUsageObject {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** OpenAI's Response, with the fields this mesh never varies fixed, plus the `mol` facts of the turn. */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  model: string;
  output: ResponseOutputMessage[];
  usage: ResponseUsageObject | null;
  conversation: { id: string };
  /**
   * `code` is the public form of the wire error code (`deadline_exceeded`, …), which says more than OpenAI's
   * `server_error`; `message` is the fixed public one (the node's own message stays inside).
   */
  error: PublicError | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: null;
  metadata: Record<string, string>;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  parallel_tool_calls: false;
  tool_choice: "none";
  tools: never[];
  text: { format: { type: "text" } };
  truncation: "disabled";
  store: true;
  background: false;
  mol: TurnMol;
}

export interface ResponseFormatOptions {
  /** Defaults to the name rebuilt from the turn (`mol`, or `mol:<label>` when forced). */
  model?: string;
  metadata?: Record<string, string> | null;
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
}

/** Response ids are the turn's, prefixed, so GET /v1/responses/{id} finds the turn without another index. */
export function toResponseId(turnId: string): string {
  return turnId.startsWith("resp_") ? turnId : `resp_${turnId}`;
}

function readResponseStatus(turn: TurnRecord): ResponseStatus {
  if (turn.status === "completed" && turn.finishReason === "length") return "incomplete";
  return turn.status;
}

function formatUsage(turn: TurnRecord): ResponseUsageObject | null {
  const sum = sumCriticalPathUsage(turn.mol.usage);
  if (sum === null) return null;
  return {
    input_tokens: sum.inputTokens,
    input_tokens_details: { cached_tokens: sum.cachedTokens, cache_write_tokens: sum.evaluatedTokens },
    output_tokens: sum.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: sum.inputTokens + sum.outputTokens,
  };
}

/** The stored error goes out mapped, as it would over HTTP: its message is the node's and may name subjects. */
function formatError(turn: TurnRecord): PublicError | null {
  if (turn.status !== "cancelled" && turn.status !== "failed") return null;
  if (turn.error !== undefined) return toPublicError(mapTurnErrorToApiError(turn.error));
  return turn.status === "cancelled"
    ? { code: "cancelled", message: "the turn was cancelled" }
    : { code: "engine_failure", message: "the turn failed" };
}

export function formatResponseOutputMessage(turn: TurnRecord): ResponseOutputMessage {
  return {
    type: "message",
    id: turn.assistantItemId,
    status: readAssistantItemStatus(turn),
    role: "assistant",
    content: [formatOutputText(turn.answerText)],
  };
}

export function formatResponseObject(turn: TurnRecord, options: ResponseFormatOptions = {}): ResponseObject {
  // A running turn with no text yet has no output: streams add the message with output_item.added.
  const hasOutput = turn.answerText !== "" || turn.status === "completed";
  return {
    id: toResponseId(turn.turnId),
    object: "response",
    created_at: turn.createdAt,
    status: readResponseStatus(turn),
    model: options.model ?? readModelName(turn.mol),
    output: hasOutput ? [formatResponseOutputMessage(turn)] : [],
    usage: formatUsage(turn),
    conversation: { id: turn.conversationId },
    error: formatError(turn),
    incomplete_details: readResponseStatus(turn) === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    metadata: options.metadata ?? {},
    temperature: options.temperature ?? null,
    top_p: options.topP ?? null,
    max_output_tokens: options.maxOutputTokens ?? null,
    parallel_tool_calls: false,
    tool_choice: "none",
    tools: [],
    text: { format: { type: "text" } },
    truncation: "disabled",
    store: true,
    background: false,
    mol: formatMol(turn.mol),
  };
}
