import { createParser } from "eventsource-parser";
import { EngineFailureError } from "../../../../schema/wire/v1/index.ts";
import { completionChunkSchema, type CompletionChunk } from "./completion-chunk-schema.ts";
import { mapEngineError } from "./map-http-error.ts";
import { readErrorBody } from "./read-error-body.ts";

const MAX_BUFFERED_CHARS = 1 << 20;
const DEFAULT_STREAM_ERROR_STATUS = 500;

/** A `data:` payload, or the value of a bare `error:` line (older llama-server sends errors that way). */
type StreamItem = { kind: "data"; text: string } | { kind: "error"; text: string };

function readErrorStatus(code: number | string | undefined): number {
  return typeof code === "number" && code >= 400 && code < 600 ? code : DEFAULT_STREAM_ERROR_STATUS;
}

function parseChunk(item: StreamItem): CompletionChunk {
  let json: unknown;
  try {
    json = JSON.parse(item.text);
  } catch (cause) {
    throw new EngineFailureError(`engine sent a malformed stream chunk: ${item.text.slice(0, 200)}`, {
      cause,
    });
  }
  // Both servers report failures after the 200 header as `data: {"error":{…}}` instead of a chunk.
  const errorText =
    item.kind === "error" ? item.text : hasErrorField(json) ? JSON.stringify(json) : undefined;
  if (errorText !== undefined) {
    const body = readErrorBody(errorText);
    throw mapEngineError(readErrorStatus(body.code), body);
  }
  const parsed = completionChunkSchema.safeParse(json);
  if (!parsed.success) {
    throw new EngineFailureError(`engine sent an unexpected stream chunk: ${item.text.slice(0, 200)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function hasErrorField(json: unknown): boolean {
  return typeof json === "object" && json !== null && "error" in json;
}

/**
 * Yields the chunks of an SSE completion stream until `[DONE]`. Aborting `signal` cancels the body, which
 * also drops the connection so the engine stops decoding; the generator then just ends and the caller,
 * which owns the signal, reports the abort. A body that errors or holds a malformed chunk throws
 * EngineFailureError; an error event throws its mapped wire error.
 */
export async function* parseCompletionStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<CompletionChunk, void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const items: StreamItem[] = [];
  let overflow: EngineFailureError | undefined;
  const parser = createParser({
    maxBufferSize: MAX_BUFFERED_CHARS,
    onEvent: (event) => items.push({ kind: "data", text: event.data }),
    onError: (error) => {
      if (error.type === "unknown-field" && error.field === "error" && error.value !== undefined) {
        items.push({ kind: "error", text: error.value });
      } else if (error.type === "max-buffer-size-exceeded") {
        overflow = new EngineFailureError("engine stream exceeded the SSE buffer limit", { cause: error });
      }
    },
  });
  const cancel = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  if (signal.aborted) cancel();
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch (cause) {
        if (signal.aborted) return;
        throw new EngineFailureError("engine stream broke mid-way", { cause });
      }
      if (result.done) parser.reset({ consume: true });
      else parser.feed(decoder.decode(result.value, { stream: true }));
      if (overflow !== undefined) throw overflow;
      for (const item of items.splice(0)) {
        if (item.kind === "data" && item.text.trim() === "[DONE]") return;
        yield parseChunk(item);
      }
      if (result.done) return;
    }
  } finally {
    signal.removeEventListener("abort", cancel);
    // Releases the connection when the consumer stops early ([DONE], a thrown error); a no-op after the end.
    void reader.cancel().catch(() => undefined);
  }
}
