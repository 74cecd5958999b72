import type { TurnRecord, TurnStreamPart } from "./turn-record.ts";

/**
 * A stored, finished turn as the parts a live one streams, so an idempotent replay goes through the same
 * encoders and a client cannot tell it from the first delivery (apart from the text arriving in one delta).
 */
export function replayTurnParts(turn: TurnRecord): AsyncIterable<TurnStreamPart> {
  if (turn.status === "in_progress") throw new RangeError(`turn ${turn.turnId} is still in progress`);
  const opening: TurnRecord = {
    ...turn,
    status: "in_progress",
    answerText: "",
    finishReason: undefined,
    toolCalls: undefined,
    error: undefined,
  };
  const parts: TurnStreamPart[] = [{ type: "turn-start", turn: opening }];
  if (turn.answerText !== "") parts.push({ type: "text-delta", delta: turn.answerText });
  // Each call in one delta, as its text is in one.
  (turn.toolCalls ?? []).forEach((call, index) =>
    parts.push({
      type: "tool-call-delta",
      index,
      id: call.id,
      name: call.name,
      argumentsDelta: call.arguments,
    }),
  );
  if (turn.status === "completed") parts.push({ type: "turn-finish", turn });
  else {
    const error = turn.error ?? {
      code: turn.status === "cancelled" ? "cancelled" : "engine_failure",
      message: `turn ${turn.status}`,
    };
    parts.push({ type: "turn-error", turn, error });
  }
  return toAsyncIterable(parts);
}

// eslint-disable-next-line @typescript-eslint/require-await -- a stored turn replayed through the live stream's async interface
async function* toAsyncIterable<T>(items: readonly T[]): AsyncGenerator<T, void, undefined> {
  yield* items;
}
