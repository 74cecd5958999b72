import type { TurnRecord, TurnStreamPart } from "../../conversation/turn-record.ts";
import type { ResponseFormatOptions } from "../format/format-response-object.ts";
import { createPartSseStream, type SseStreamOptions } from "./create-part-sse-stream.ts";
import { replayTurnParts } from "../../conversation/replay-turn-parts.ts";
import { ResponsesEventEncoder } from "./responses-event-encoder.ts";

export type ResponsesEventStreamOptions = ResponseFormatOptions &
  SseStreamOptions & {
    /** Stream resume: only events after this `sequence_number`. */
    startingAfter?: number;
  };

/** `POST /v1/responses` with `stream: true`: serve with `content-type: text/event-stream`. */
export function createResponsesEventStream(
  parts: AsyncIterable<TurnStreamPart>,
  options: ResponsesEventStreamOptions = {},
): ReadableStream<Uint8Array> {
  const { keepAliveMs, onCancel, ...format } = options;
  return createPartSseStream(parts, new ResponsesEventEncoder(format), {
    ...(keepAliveMs === undefined ? {} : { keepAliveMs }),
    ...(onCancel === undefined ? {} : { onCancel }),
  });
}

/** The same events for a stored, finished turn (an idempotent replay). Throws RangeError while it runs. */
export function replayResponsesEventStream(
  turn: TurnRecord,
  options: ResponsesEventStreamOptions = {},
): ReadableStream<Uint8Array> {
  return createResponsesEventStream(replayTurnParts(turn), options);
}
