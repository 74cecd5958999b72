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

export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

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
  /** Null for a response made without `conversation` (its implicit conversation is not shown). */
  conversation: { id: string } | null;
  /**
   * `code` is the public form of the wire error code (`deadline_exceeded`, …), which says more than OpenAI's
   * `server_error`; `message` is the fixed public one (the node's own message stays inside).
   */
  error: PublicError | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: string | null;
  previous_response_id: string | null;
  metadata: Record<string, string>;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  parallel_tool_calls: false;
  tool_choice: "none" | "auto";
  tools: never[];
  text: { format: { type: "text" } };
  truncation: "disabled";
  store: boolean;
  background: boolean;
  mol: TurnMol;
}

/**
 * What the request asked for. A stored turn carries it (`turn.response`, from its user message), so GET echoes
 * what the POST did; options given here win over it.
 */
export interface ResponseFormatOptions {
  /** Defaults to the name rebuilt from the turn (`mol`, or `mol:<label>` when forced). */
  model?: string | undefined;
  metadata?: Record<string, string> | null | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  maxOutputTokens?: number | undefined;
  instructions?: string | undefined;
  toolChoice?: "none" | "auto" | undefined;
  background?: boolean | undefined;
  previousResponseId?: string | undefined;
  /** False: the response has no `conversation` to show. */
  inConversation?: boolean | undefined;
  /** False for `store: false` (nothing was kept). */
  store?: boolean | undefined;
  /** A background turn not yet started. */
  status?: "queued";
}

function readOptions(turn: TurnRecord, options: ResponseFormatOptions): ResponseFormatOptions {
  const echo = turn.response ?? {};
  const toolChoice = echo.toolChoice === "auto" || echo.toolChoice === "none" ? echo.toolChoice : undefined;
  const stored: ResponseFormatOptions = {
    ...(echo.model === undefined ? {} : { model: echo.model }),
    ...(echo.metadata === undefined ? {} : { metadata: echo.metadata }),
    ...(echo.temperature === undefined ? {} : { temperature: echo.temperature }),
    ...(echo.topP === undefined ? {} : { topP: echo.topP }),
    ...(echo.maxOutputTokens === undefined ? {} : { maxOutputTokens: echo.maxOutputTokens }),
    ...(echo.instructions === undefined ? {} : { instructions: echo.instructions }),
    ...(toolChoice === undefined ? {} : { toolChoice }),
    ...(echo.background === undefined ? {} : { background: echo.background }),
    ...(echo.previousResponseId === undefined ? {} : { previousResponseId: echo.previousResponseId }),
    ...(echo.inConversation === undefined ? {} : { inConversation: echo.inConversation }),
  };
  return { ...stored, ...options };
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

export function formatResponseObject(
  turn: TurnRecord,
  formatOptions: ResponseFormatOptions = {},
): ResponseObject {
  const options = readOptions(turn, formatOptions);
  // A running turn with no text yet has no output: streams add the message with output_item.added.
  const hasOutput = turn.answerText !== "" || turn.status === "completed";
  return {
    id: toResponseId(turn.turnId),
    object: "response",
    created_at: turn.createdAt,
    status: options.status ?? readResponseStatus(turn),
    model: options.model ?? readModelName(turn.mol),
    output: hasOutput ? [formatResponseOutputMessage(turn)] : [],
    usage: formatUsage(turn),
    conversation: options.inConversation === false ? null : { id: turn.conversationId },
    error: formatError(turn),
    incomplete_details: readResponseStatus(turn) === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: options.instructions ?? null,
    previous_response_id: options.previousResponseId ?? null,
    metadata: options.metadata ?? {},
    temperature: options.temperature ?? null,
    top_p: options.topP ?? null,
    max_output_tokens: options.maxOutputTokens ?? null,
    parallel_tool_calls: false,
    tool_choice: options.toolChoice ?? "none",
    tools: [],
    text: { format: { type: "text" } },
    truncation: "disabled",
    store: options.store ?? true,
    background: options.background ?? false,
    mol: formatMol(turn.mol),
  };
}
