import type { TurnMol, TurnRecord } from "../../conversation/turn-record.ts";
import { formatMol } from "./format-mol.ts";

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export interface UserItemObject {
  id: string;
  type: "message";
  role: "user";
  status: "completed";
  content: [{ type: "input_text"; text: string }];
}

export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: never[];
}

export interface AssistantItemObject {
  id: string;
  type: "message";
  role: "assistant";
  status: ItemStatus;
  content: [OutputTextPart];
  mol?: TurnMol;
}

export type ItemInput =
  | { role: "user"; id: string; text: string }
  | { role: "assistant"; id: string; text: string; status: ItemStatus; mol?: TurnMol };

export function formatOutputText(text: string): OutputTextPart {
  return { type: "output_text", text, annotations: [] };
}

export function formatItem(item: ItemInput): UserItemObject | AssistantItemObject {
  if (item.role === "user") {
    return {
      id: item.id,
      type: "message",
      role: "user",
      status: "completed",
      content: [{ type: "input_text", text: item.text }],
    };
  }
  const formatted: AssistantItemObject = {
    id: item.id,
    type: "message",
    role: "assistant",
    status: item.status,
    content: [formatOutputText(item.text)],
  };
  if (item.mol !== undefined) formatted.mol = formatMol(item.mol);
  return formatted;
}

/** A turn cut short (token budget, failure, cancel) leaves an `incomplete` message, as OpenAI marks it. */
export function readAssistantItemStatus(turn: TurnRecord): ItemStatus {
  if (turn.status === "in_progress") return "in_progress";
  if (turn.status === "completed" && turn.finishReason !== "length") return "completed";
  return "incomplete";
}

/** The two items a turn adds to its conversation, oldest first. */
export function formatTurnItems(turn: TurnRecord): [UserItemObject, AssistantItemObject] {
  return [
    {
      id: turn.userItemId,
      type: "message",
      role: "user",
      status: "completed",
      content: [{ type: "input_text", text: turn.userText }],
    },
    {
      id: turn.assistantItemId,
      type: "message",
      role: "assistant",
      status: readAssistantItemStatus(turn),
      content: [formatOutputText(turn.answerText)],
      mol: formatMol(turn.mol),
    },
  ];
}
