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

export function buildResponseId(turnId: string): string {
  return `resp_${turnId.replace(/^turn_/, "")}`;
}
