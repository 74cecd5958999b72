import type { Msg, NatsConnection, QueuedIterator } from "@nats-io/nats-core";
import { z } from "zod";
import {
  DeadlineExceededError,
  ProtocolError,
  decodeWireMessage,
  encodeWireMessage,
  errorReplySchema,
  generateRequestSchema,
  rebuildWireError,
  streamPartSchema,
  type GenerateRequestInput,
  type StreamPart,
} from "../../../schema/wire/v2/index.ts";
import {
  DEFAULT_REPLY_GRACE_MS,
  generateSubject,
  hopOutcome,
  mapNatsError,
  publishCancel,
  startHopSpan,
  watchHopAbort,
  type HopCallOptions,
} from "./hop-transport.ts";

export type GenerateStreamPart = Exclude<StreamPart, { type: "error" } | { type: "keepalive" }>;

/** A stream's first message: a part, or the error reply of a request the node could not read. */
const firstMessageSchema = z.union([streamPartSchema, errorReplySchema]);

/**
 * Streams a generate request (`return.stream` forced on): yields `start`, the deltas and ends after `finish`;
 * `keepalive` parts only reset the stall timeout (`stallTimeoutMs` can be a few keepalive intervals). A node's
 * `error` part is rethrown as its typed error; a lost part (gap in `seq`), a stream that ends without `finish` and an
 * abort each end the stream with a typed error too, so a caller never mistakes a partial output for a whole one.
 */
export async function* streamGenerate(
  nc: NatsConnection,
  input: GenerateRequestInput,
  options: HopCallOptions = {},
): AsyncGenerator<GenerateStreamPart, void, undefined> {
  const request = generateRequestSchema.parse({ ...input, return: { ...input.return, stream: true } });
  const subject = generateSubject(options);
  const { signal } = options;
  signal?.throwIfAborted();

  const abort = watchHopAbort(nc, request.priority, request.requestId, signal, options.subjectPrefix);
  const { span, headers } = startHopSpan(request.priority, request.requestId, subject, options.trace);
  let outcome = "cancelled";

  let replies: AsyncIterable<Msg> | undefined;
  let iterator: AsyncIterator<Msg> | undefined;
  let ended = false;
  try {
    replies = await nc
      .requestMany(subject, encodeWireMessage(request), {
        strategy: "sentinel",
        // requestMany's maxWait silently ends the iterator: it must cover the whole generation.
        maxWait: request.timeoutMs + DEFAULT_REPLY_GRACE_MS,
        headers,
      })
      .catch((error: unknown) => {
        throw mapNatsError(error, subject);
      });
    iterator = replies[Symbol.asyncIterator]();
    for (let expectedSeq = 0; ; expectedSeq++) {
      const silenceMs = expectedSeq === 0 ? options.firstPartTimeoutMs : options.stallTimeoutMs;
      const next = await raceSilence(
        Promise.race([iterator.next(), abort.aborted]),
        silenceMs,
        subject,
      ).catch((error: unknown) => {
        throw mapNatsError(error, subject);
      });
      if (next.done) {
        throw new DeadlineExceededError(`stream on ${subject} gave no finish within ${request.timeoutMs} ms`);
      }
      if (next.value.data.length === 0) throw new ProtocolError("stream ended without a finish part");
      const part = decodeWireMessage(
        expectedSeq === 0 ? firstMessageSchema : streamPartSchema,
        next.value.data,
        "reply",
      );
      if (!("seq" in part)) {
        // A request the node could not read (not even its `return.stream`) gets the unstreamed error reply.
        ended = true;
        throw rebuildWireError(part.error);
      }
      if (part.seq !== expectedSeq) {
        throw new ProtocolError(`stream lost parts: expected seq ${expectedSeq}, got ${part.seq}`);
      }
      if (part.type === "error") {
        ended = true;
        throw rebuildWireError(part.error);
      }
      if (part.type === "keepalive") continue;
      ended = part.type === "finish";
      if (ended) outcome = "ok";
      yield part;
      if (ended) return;
    }
  } catch (error) {
    outcome = hopOutcome(error);
    throw error;
  } finally {
    abort.dispose();
    span.end(outcome);
    // Whatever stopped us early (a consumer that broke off, a gap, our own deadline), the node must stop too.
    if (!ended && !signal?.aborted)
      publishCancel(nc, request.requestId, "requester stopped reading", options.subjectPrefix);
    // Not `await iterator.return()`: the iterator is an async generator parked on a `next()` that may never
    // settle (a dead node sends nothing more), and return() would queue behind it forever. stop() ends it.
    (replies as Partial<QueuedIterator<Msg>> | undefined)?.stop?.();
  }
}

/** Rejects when `work` takes longer than `silenceMs` (no limit when undefined): a node that went quiet. */
async function raceSilence<T>(work: Promise<T>, silenceMs: number | undefined, subject: string): Promise<T> {
  if (silenceMs === undefined) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DeadlineExceededError(`no part on ${subject} for ${silenceMs} ms: the node is hung or gone`),
        ),
      silenceMs,
    );
  });
  try {
    return await Promise.race([work, silence]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
