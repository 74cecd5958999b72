/**
 * A push-based NDJSON byte stream with a cancellation signal: the producer pushes parts, and when the consumer
 * cancels (the client went away), `signal` aborts so the producer can stop its upstream work.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is what `push` accepts, chosen by the caller
export function createPartStream<T>(): {
  stream: ReadableStream<Uint8Array>;
  // Properties, not methods: callers destructure them, and neither uses `this`.
  push: (part: T) => void;
  close: () => void;
  signal: AbortSignal;
} {
  const encoder = new TextEncoder();
  const controller = new AbortController();
  let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      sink = c;
    },
    cancel(reason) {
      closed = true;
      controller.abort(reason ?? new Error("consumer cancelled"));
    },
  });
  return {
    stream,
    signal: controller.signal,
    push(part) {
      if (closed) return;
      sink?.enqueue(encoder.encode(`${JSON.stringify(part)}\n`));
    },
    close() {
      if (closed) return;
      closed = true;
      sink?.close();
    },
  };
}

/** Reads an NDJSON byte stream back into parts; returning early cancels the stream (and so its producer). */
export async function* readPartStream<T>(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<T, void, undefined> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      buffer += decoder.decode(next.value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line) yield JSON.parse(line) as T;
        newline = buffer.indexOf("\n");
      }
    }
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
