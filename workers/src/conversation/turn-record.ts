import type { TurnMol } from "../../../schema/api/mol.ts";
import type { ToolCall, WireErrorCode } from "../../../schema/wire/v2/index.ts";
import type { ResponseEcho, ToolResult } from "../db/timeline-event.ts";
import type { StageTimings } from "../lib/stage-timings.ts";

/** The MoL facts of one turn: the extra `mol` object on responses and assistant items (schema/api/mol.ts). */
export type { TurnMol };

export type TurnStatus = "in_progress" | "completed" | "failed" | "cancelled";

/** Everything the API layer needs to render a turn as a Response, a chat completion or conversation items. */
export interface TurnRecord {
  turnId: string;
  conversationId: string;
  /** Unix seconds. */
  createdAt: number;
  status: TurnStatus;
  /** Deterministic item ids (derived from the timeline), e.g. `msg_…`. */
  userItemId: string;
  assistantItemId: string;
  userText: string;
  /** The `function_call_output` items the turn's input was (`userText` is then their view text). */
  toolResults?: ToolResult[] | undefined;
  /** The answer so far (complete when status = completed). */
  answerText: string;
  finishReason?: "stop" | "length" | "tool_calls" | undefined;
  /** The function calls the answer made (finishReason `tool_calls`); `answerText` is then empty. */
  toolCalls?: ToolCall[] | undefined;
  error?: { code: WireErrorCode | "cancelled"; message: string } | undefined;
  mol: TurnMol;
  /** What the `POST /v1/responses` asked for, when a response started the turn. */
  response?: ResponseEcho;
}

/** What a running turn streams out of the conversation object, in this order. */
export type TurnStreamPart =
  /** The route decision is made; the answer is about to stream. */
  | { type: "turn-start"; turn: TurnRecord }
  | { type: "text-delta"; delta: string }
  /** A slice of call `index`'s arguments; `id` and `name` repeat on each. */
  | { type: "tool-call-delta"; index: number; id: string; name: string; argumentsDelta: string }
  /** `stages`: where the object's time went (stage-timings.ts), for the `server-timing` header; live only. */
  | { type: "turn-finish"; turn: TurnRecord; stages?: StageTimings }
  | {
      type: "turn-error";
      turn: TurnRecord;
      /** `retryAfterMs`: a full node queue's hint, for the 503's `retry-after` (live only, never stored). */
      error: { code: WireErrorCode; message: string; retryAfterMs?: number };
    };
