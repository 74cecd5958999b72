import { encodeSseComment } from "./encode-sse.ts";

/** Turns a source of parts into SSE frames for one wire format; stateful, one per stream. */
export interface PartEncoder<P> {
  /** `done`: the part was terminal; the stream closes after these frames. */
  encodePart(part: P): { frames: string[]; done: boolean };
  /** The source ended without a terminal part. */
  encodeEnd(): string[];
  /** The source threw. */
  encodeFailure(error: unknown): string[];
}

export interface SseStreamOptions {
  /** Sends `: keepalive` after this long without a frame; off when absent. */
  keepAliveMs?: number;
  /** Called once when the consumer cancels (client disconnect), before the source's `return()`. */
  onCancel?: (reason: unknown) => void;
}

const KEEPALIVE = Symbol("keepalive");

function waitForNext<T>(next: Promise<T>, keepAliveMs: number | undefined): Promise<T | typeof KEEPALIVE> {
  if (keepAliveMs === undefined) return next;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = new Promise<typeof KEEPALIVE>(
    (resolve) => (timer = setTimeout(() => resolve(KEEPALIVE), keepAliveMs)),
  );
  return Promise.race([next, tick]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/**
 * Pulls parts only as fast as the client reads. Cancelling the stream calls the source's `return()`: a client
 * that goes away must stop the answer hop. A source whose `next()` is stuck (an async generator awaiting a
 * hop) only sees `return()` once it yields again, so `onCancel` is the immediate signal.
 */
export function createPartSseStream<P>(
  parts: AsyncIterable<P>,
  encoder: PartEncoder<P>,
  options: SseStreamOptions = {},
): ReadableStream<Uint8Array> {
  const iterator = parts[Symbol.asyncIterator]();
  const bytes = new TextEncoder();
  let closed = false;
  let pending: Promise<IteratorResult<P>> | undefined;

  const releaseSource = (): void => {
    try {
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
    } catch {
      // A throwing return() has nothing left to release.
    }
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const emit = (frames: string[]): void => {
        for (const frame of frames) controller.enqueue(bytes.encode(frame));
      };
      const finish = (frames: string[]): void => {
        closed = true;
        emit(frames);
        controller.close();
      };
      // pull must enqueue before it resolves, or the runtime never calls it again and the reader hangs.
      let sent = false;
      while (!sent && !closed) {
        let result: IteratorResult<P> | typeof KEEPALIVE;
        try {
          pending ??= iterator.next();
          result = await waitForNext(pending, options.keepAliveMs);
        } catch (error) {
          pending = undefined;
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- cancel() may have closed it during the await
          if (!closed) finish(encoder.encodeFailure(error));
          return;
        }
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- cancel() may have closed it during the await
        if (closed) return;
        if (result === KEEPALIVE) {
          emit([encodeSseComment("keepalive")]);
          return;
        }
        pending = undefined;
        if (result.done === true) {
          finish(encoder.encodeEnd());
          return;
        }
        const { frames, done } = encoder.encodePart(result.value);
        if (done) {
          finish(frames);
          releaseSource();
          return;
        }
        emit(frames);
        sent = frames.length > 0;
      }
    },
    cancel(reason) {
      if (closed) return;
      closed = true;
      pending?.catch(() => undefined);
      options.onCancel?.(reason);
      releaseSource();
    },
  });
}
