import type { TurnRecord, TurnStreamPart } from "../../conversation/turn-record.ts";
import { ChatChunkEncoder, type ChatChunkOptions } from "./chat-chunk-encoder.ts";
import { createPartSseStream, type SseStreamOptions } from "./create-part-sse-stream.ts";
import { replayTurnParts } from "../../conversation/replay-turn-parts.ts";

export type ChatCompletionEventStreamOptions = ChatChunkOptions & SseStreamOptions;

/** `POST /v1/chat/completions` with `stream: true`: serve with `content-type: text/event-stream`. */
export function createChatCompletionEventStream(
  parts: AsyncIterable<TurnStreamPart>,
  options: ChatCompletionEventStreamOptions,
): ReadableStream<Uint8Array> {
  return createPartSseStream(parts, new ChatChunkEncoder(options), options);
}

/** The same chunks for a stored, finished turn (an idempotent replay). Throws RangeError while it runs. */
export function replayChatCompletionEventStream(
  turn: TurnRecord,
  options: ChatCompletionEventStreamOptions,
): ReadableStream<Uint8Array> {
  return createChatCompletionEventStream(replayTurnParts(turn), options);
}
