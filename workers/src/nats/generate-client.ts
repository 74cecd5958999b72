import type { NatsConnection } from "@nats-io/nats-core";
import {
  decodeWireMessage,
  encodeWireMessage,
  generateReplySchema,
  generateRequestSchema,
  rebuildWireError,
  type GenerateRequestInput,
  type GenerateResult,
  type HopTraceContext,
} from "../../../schema/wire/v2/index.ts";
import { streamGenerate, type GenerateStreamPart } from "./stream-generate.ts";
import {
  DEFAULT_REPLY_GRACE_MS,
  generateSubject,
  hopOutcome,
  mapNatsError,
  startHopSpan,
  watchHopAbort,
  type HopCallOptions,
} from "./hop-transport.ts";

export type { GenerateStreamPart } from "./stream-generate.ts";
export type { HopCallOptions } from "./hop-transport.ts";

/**
 * The one wire call as the edge's steps see it; the transport (NATS, its subjects) stays behind this type. Route,
 * answer and summary are functions over it (workers/src/generate/).
 */
export interface GenerateClient {
  /** One reply: the request's `return.stream` is forced off. Rejects with a typed MolWireError. */
  generate(input: GenerateRequestInput, options?: HopCallOptions): Promise<GenerateResult>;
  /** Parts as they are decoded: `return.stream` is forced on. Ends with a typed MolWireError on failure. */
  stream(input: GenerateRequestInput, options?: HopCallOptions): AsyncIterable<GenerateStreamPart>;
}

/**
 * Generate requests over NATS; the connection is resolved per call so a reconnecting or replaced connection is
 * picked up. `traceOf` names the HTTP request a request serves (looked up by its own request id), for callers that
 * cannot pass {@link HopCallOptions.trace} themselves.
 */
export function createNatsGenerateClient(
  connection: () => Promise<NatsConnection>,
  subjectPrefix?: string,
  traceOf?: (hopRequestId: string) => HopTraceContext | undefined,
): GenerateClient {
  const withPrefix = (input: { requestId: string }, options?: HopCallOptions): HopCallOptions => {
    const trace = options?.trace ?? traceOf?.(input.requestId);
    return { subjectPrefix, ...options, ...(trace ? { trace } : {}) };
  };
  return {
    generate: async (input, options) =>
      requestGenerate(await connection(), input, withPrefix(input, options)),
    async *stream(input, options) {
      yield* streamGenerate(await connection(), input, withPrefix(input, options));
    },
  };
}

/** Request-reply for a generate request that answers in one message. */
export async function requestGenerate(
  nc: NatsConnection,
  input: GenerateRequestInput,
  options: HopCallOptions = {},
): Promise<GenerateResult> {
  const request = generateRequestSchema.parse({ ...input, return: { ...input.return, stream: false } });
  const subject = generateSubject(options);
  options.signal?.throwIfAborted();
  const abort = watchHopAbort(nc, request.priority, request.requestId, options.signal, options.subjectPrefix);
  const { span, headers } = startHopSpan(request.priority, request.requestId, subject, options.trace);
  let outcome = "ok";
  try {
    const msg = await Promise.race([
      nc.request(subject, encodeWireMessage(request), {
        timeout: request.timeoutMs + DEFAULT_REPLY_GRACE_MS,
        headers,
      }),
      abort.aborted,
    ]).catch((error: unknown) => {
      throw mapNatsError(error, subject);
    });
    const reply = decodeWireMessage(generateReplySchema, msg.data, "reply");
    if (reply.type === "error") throw rebuildWireError(reply.error);
    return reply;
  } catch (error) {
    outcome = hopOutcome(error);
    throw error;
  } finally {
    abort.dispose();
    span.end(outcome);
  }
}
