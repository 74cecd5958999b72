import type { ContextMessage } from "../../db/timeline-event.ts";
import type { StoredItem } from "../../conversation/conversation-rpc.ts";
import { buildFunctionCallOutputItemId } from "../../conversation/item-id.ts";
import type { TurnRecord } from "../../conversation/turn-record.ts";
import {
  formatItem,
  readAssistantItemStatus,
  type AssistantItemObject,
  type UserItemObject,
} from "./format-item.ts";
import { formatFunctionCallItem, type ResponseFunctionCallItem } from "./format-response-object.ts";

/**
 * Conversation items as OpenAI shows them: messages, and for tool turns the `function_call` items an answer
 * made and the `function_call_output` items a turn's input was (the views hold both as text; see
 * tool-turn-text.ts), so a client reading the items back gets the items it sent and received.
 */

/** A tool's result as OpenAI's `function_call_output` item. */
export interface FunctionCallOutputItemObject {
  id: string;
  type: "function_call_output";
  call_id: string;
  output: string;
  status: "completed";
}

export type ConversationItemObject =
  UserItemObject | AssistantItemObject | ResponseFunctionCallItem | FunctionCallOutputItemObject;

function formatFunctionCallOutput(id: string, result: { callId: string; output: string }) {
  return {
    id,
    type: "function_call_output",
    call_id: result.callId,
    output: result.output,
    status: "completed",
  } as const;
}

/** An earlier message a turn came with: a message, or the `function_call`/`function_call_output` it was. */
export function formatContextItem(id: string, message: ContextMessage): ConversationItemObject {
  if (message.toolResult) return formatFunctionCallOutput(id, message.toolResult);
  if (message.toolCall) {
    const { id: callId, name, arguments: args } = message.toolCall;
    return { type: "function_call", id, call_id: callId, name, arguments: args, status: "completed" };
  }
  return message.role === "user"
    ? formatItem({ role: "user", id, text: message.text })
    : formatItem({ role: "assistant", id, text: message.text, status: "completed" });
}

/** A turn's input as items: its user message, or the `function_call_output` items it was. */
export function formatTurnInputItems(turn: TurnRecord): ConversationItemObject[] {
  if (!turn.toolResults) return [formatItem({ role: "user", id: turn.userItemId, text: turn.userText })];
  return turn.toolResults.map((result, index) =>
    formatFunctionCallOutput(buildFunctionCallOutputItemId(turn.turnId, index), result),
  );
}

/** One conversation item (see list-items.ts) in OpenAI's shape. */
export function formatStoredItem(item: StoredItem): ConversationItemObject {
  if ("context" in item) return formatContextItem(item.context.id, item.context);
  const { turn } = item;
  if ("callIndex" in item) {
    const call = turn.toolCalls?.[item.callIndex];
    if (call) return formatFunctionCallItem(turn, item.callIndex, call, "completed");
  }
  if ("resultIndex" in item) {
    const result = turn.toolResults?.[item.resultIndex];
    if (result)
      return formatFunctionCallOutput(buildFunctionCallOutputItemId(turn.turnId, item.resultIndex), result);
  }
  return item.role === "user"
    ? formatItem({ role: "user", id: turn.userItemId, text: turn.userText })
    : formatItem({
        role: "assistant",
        id: turn.assistantItemId,
        text: turn.answerText,
        status: readAssistantItemStatus(turn),
        mol: turn.mol,
      });
}
