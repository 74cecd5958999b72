/**
 * Item ids derive from the turn id, so they are known before an answer exists (streaming needs the assistant
 * item's id up front) and lead back to the turn's events.
 */
export function buildItemId(turnId: string, role: "user" | "assistant"): string {
  return `msg_${turnId.replace(/^turn_/, "")}${role === "user" ? "u" : "a"}`;
}

export function parseItemId(itemId: string): { turnId: string; role: "user" | "assistant" } | undefined {
  const match = /^msg_([A-Za-z0-9]{1,64})([ua])$/.exec(itemId);
  if (!match?.[1]) return undefined;
  return { turnId: `turn_${match[1]}`, role: match[2] === "u" ? "user" : "assistant" };
}

/**
 * Earlier messages that came in with a turn (an item array) or through `POST /v1/conversations/{id}/items` are
 * items too, numbered within their `context_messages` event.
 */
export function buildContextItemId(turnId: string, index: number): string {
  return `msg_${turnId.replace(/^turn_/, "")}c${index}`;
}

export function parseContextItemId(itemId: string): { turnId: string; index: number } | undefined {
  const match = /^msg_([A-Za-z0-9]{1,64})c([0-9]{1,3})$/.exec(itemId);
  if (!match?.[1] || match[2] === undefined) return undefined;
  return { turnId: `turn_${match[1]}`, index: Number(match[2]) };
}

/** The `function_call` output items of an answer that made calls, numbered by call. */
export function buildFunctionCallItemId(turnId: string, index: number): string {
  return `fc_${turnId.replace(/^turn_/, "")}_${index}`;
}

export function parseFunctionCallItemId(itemId: string): { turnId: string; index: number } | undefined {
  const match = /^fc_([A-Za-z0-9]{1,64})_([0-9]{1,3})$/.exec(itemId);
  if (!match?.[1] || match[2] === undefined) return undefined;
  return { turnId: `turn_${match[1]}`, index: Number(match[2]) };
}

/** The `function_call_output` items a tool-result turn's input was, numbered by result. */
export function buildFunctionCallOutputItemId(turnId: string, index: number): string {
  return `fco_${turnId.replace(/^turn_/, "")}_${index}`;
}

export function parseFunctionCallOutputItemId(itemId: string): { turnId: string; index: number } | undefined {
  const match = /^fco_([A-Za-z0-9]{1,64})_([0-9]{1,3})$/.exec(itemId);
  if (!match?.[1] || match[2] === undefined) return undefined;
  return { turnId: `turn_${match[1]}`, index: Number(match[2]) };
}

export function buildResponseId(turnId: string): string {
  return `resp_${turnId.replace(/^turn_/, "")}`;
}

const CONVERSATION_HEX = /^conv_([0-9a-f]{32})$/;
const STORED_RESPONSE_ID = /^resp_turn_([0-9a-f]{32})([0-9a-f]{16})$/;

/**
 * A stored turn's id names its conversation (`turn_<conversation hex><random hex>`), so a response id
 * (`resp_<turn id>`) leads to the conversation's object without an index or a scan; the object is named under
 * the caller's tenant, so another tenant's id finds nothing. Other conversation keys get a plain random id.
 */
export function buildTurnId(conversationId: string, randomHex: string): string {
  const hex = CONVERSATION_HEX.exec(conversationId)?.[1];
  return hex ? `turn_${hex}${randomHex.slice(0, 16)}` : `turn_${randomHex}`;
}

/** The conversation and turn of a stored response id, or undefined when the id cannot be one. */
export function parseResponseId(responseId: string): { conversationId: string; turnId: string } | undefined {
  const match = STORED_RESPONSE_ID.exec(responseId);
  if (!match?.[1] || !match[2]) return undefined;
  return { conversationId: `conv_${match[1]}`, turnId: `turn_${match[1]}${match[2]}` };
}
