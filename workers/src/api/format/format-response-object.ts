import { buildFunctionCallItemId } from "../../conversation/item-id.ts";
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

/** A function call the answer made, as OpenAI's `function_call` output item. */
export interface ResponseFunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export type ResponseOutputItem = ResponseOutputMessage | ResponseFunctionCallItem;

/** A function tool as the response echoes it (OpenAI fills `description` and `strict`). */
export interface ResponseToolObject {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean;
}

export type ResponseToolChoiceObject = "none" | "auto" | "required" | { type: "function"; name: string };
export type ResponseTextFormatObject =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      name: string;
      schema: Record<string, unknown>;
      description?: string;
      strict: boolean;
    };

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
  output: ResponseOutputItem[];
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
  parallel_tool_calls: boolean;
  tool_choice: ResponseToolChoiceObject;
  tools: ResponseToolObject[];
  text: { format: ResponseTextFormatObject };
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
  /** As the request sent them (the stored echo keeps them as JSON). */
  toolChoice?: unknown;
  tools?: readonly unknown[] | undefined;
  parallelToolCalls?: boolean | undefined;
  text?: unknown;
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
  const stored: ResponseFormatOptions = {
    ...(echo.model === undefined ? {} : { model: echo.model }),
    ...(echo.metadata === undefined ? {} : { metadata: echo.metadata }),
    ...(echo.temperature === undefined ? {} : { temperature: echo.temperature }),
    ...(echo.topP === undefined ? {} : { topP: echo.topP }),
    ...(echo.maxOutputTokens === undefined ? {} : { maxOutputTokens: echo.maxOutputTokens }),
    ...(echo.instructions === undefined ? {} : { instructions: echo.instructions }),
    ...(echo.toolChoice === undefined ? {} : { toolChoice: echo.toolChoice }),
    ...(echo.tools === undefined ? {} : { tools: echo.tools }),
    ...(echo.parallelToolCalls === undefined ? {} : { parallelToolCalls: echo.parallelToolCalls }),
    ...(echo.text === undefined ? {} : { text: echo.text }),
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

/** The call items of a `tool_calls` answer; ids derive from the turn, so every read gives the same ones. */
export function formatFunctionCallItems(turn: TurnRecord): ResponseFunctionCallItem[] {
  return (turn.toolCalls ?? []).map((call, index) => formatFunctionCallItem(turn, index, call, "completed"));
}

export function formatFunctionCallItem(
  turn: TurnRecord,
  index: number,
  call: { id: string; name: string; arguments: string },
  status: ItemStatus,
): ResponseFunctionCallItem {
  return {
    type: "function_call",
    id: buildFunctionCallItemId(turn.turnId, index),
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    status,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function formatTools(tools: readonly unknown[] | undefined): ResponseToolObject[] {
  return (tools ?? []).filter(isRecord).map((tool) => ({
    type: "function",
    name: String(tool["name"]),
    description: typeof tool["description"] === "string" ? tool["description"] : null,
    parameters: isRecord(tool["parameters"])
      ? tool["parameters"]
      : { type: "object", properties: {}, additionalProperties: false },
    strict: tool["strict"] !== false,
  }));
}

function formatToolChoice(choice: unknown): ResponseToolChoiceObject {
  if (choice === "none" || choice === "auto" || choice === "required") return choice;
  if (isRecord(choice) && typeof choice["name"] === "string")
    return { type: "function", name: choice["name"] };
  return "auto";
}

function formatTextFormat(text: unknown): ResponseTextFormatObject {
  const format = isRecord(text) ? text["format"] : undefined;
  if (!isRecord(format)) return { type: "text" };
  if (format["type"] === "json_object") return { type: "json_object" };
  if (format["type"] !== "json_schema") return { type: "text" };
  return {
    type: "json_schema",
    name: String(format["name"]),
    schema: isRecord(format["schema"]) ? format["schema"] : {},
    ...(typeof format["description"] === "string" ? { description: format["description"] } : {}),
    strict: format["strict"] !== false,
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
    output: turn.toolCalls
      ? formatFunctionCallItems(turn)
      : hasOutput
        ? [formatResponseOutputMessage(turn)]
        : [],
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
    parallel_tool_calls: options.parallelToolCalls ?? true,
    tool_choice: formatToolChoice(options.toolChoice),
    tools: formatTools(options.tools),
    text: { format: formatTextFormat(options.text) },
    truncation: "disabled",
    store: options.store ?? true,
    background: options.background ?? false,
    mol: formatMol(turn.mol),
  };
}
