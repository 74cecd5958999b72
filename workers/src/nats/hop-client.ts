import type { NatsConnection } from "@nats-io/nats-core";
import type { z } from "zod";
import {
  buildHopSubject,
  decodeWireMessage,
  encodeWireMessage,
  rebuildWireError,
  routeReplySchema,
  routeRequestSchema,
  summaryReplySchema,
  summaryRequestSchema,
  type AnswerRequestInput,
  type ErrorReply,
  type Hop,
  type HopTraceContext,
  type RouteRequestInput,
  type RouteResult,
  type SummaryRequestInput,
  type SummaryResult,
  type WireVersion,
} from "../../../schema/wire/v2/index.ts";
import { streamAnswer, type AnswerStreamPart } from "./answer-stream.ts";
import {
  DEFAULT_REPLY_GRACE_MS,
  hopOutcome,
  mapNatsError,
  startHopSpan,
  watchHopAbort,
  type HopCallOptions,
} from "./hop-transport.ts";

export type { AnswerStreamPart } from "./answer-stream.ts";
export type { HopCallOptions } from "./hop-transport.ts";

/** The three hops as the conversation logic sees them; the transport (NATS) stays behind this type. */
export interface HopClient {
  route(input: RouteRequestInput, options?: HopCallOptions): Promise<RouteResult>;
  answer(input: AnswerRequestInput, options?: HopCallOptions): AsyncIterable<AnswerStreamPart>;
  summary(input: SummaryRequestInput, options?: HopCallOptions): Promise<SummaryResult>;
}

/**
 * Hops over NATS; the connection is resolved per call so a reconnecting or replaced connection is picked up.
 * `traceOf` names the HTTP request a hop serves (looked up by the hop's own request id), for callers that cannot
 * pass {@link HopCallOptions.trace} themselves.
 */
export function createNatsHopClient(
  connection: () => Promise<NatsConnection>,
  subjectPrefix?: string,
  traceOf?: (hopRequestId: string) => HopTraceContext | undefined,
): HopClient {
  const withPrefix = (input: { requestId: string }, options?: HopCallOptions): HopCallOptions => {
    const trace = options?.trace ?? traceOf?.(input.requestId);
    return { subjectPrefix, ...options, ...(trace ? { trace } : {}) };
  };
  return {
    route: async (input, options) => requestRoute(await connection(), input, withPrefix(input, options)),
    summary: async (input, options) => requestSummary(await connection(), input, withPrefix(input, options)),
    async *answer(input, options) {
      yield* streamAnswer(await connection(), input, withPrefix(input, options));
    },
  };
}

/** Runs the route hop on a GPU node; resolves with a valid label or rejects with a typed MolWireError. */
export function requestRoute(
  nc: NatsConnection,
  input: RouteRequestInput,
  options: HopCallOptions = {},
): Promise<RouteResult> {
  return requestSingleReplyHop(nc, "route", routeRequestSchema.parse(input), routeReplySchema, options);
}

/** Runs the summary hop on a GPU node (greedy, ≤ 192 tokens); rejects with a typed MolWireError. */
export function requestSummary(
  nc: NatsConnection,
  input: SummaryRequestInput,
  options: HopCallOptions = {},
): Promise<SummaryResult> {
  return requestSingleReplyHop(nc, "summary", summaryRequestSchema.parse(input), summaryReplySchema, options);
}

type HopRequest = { version: WireVersion; requestId: string; timeoutMs: number };

/** Request-reply for the hops that answer in one message (route, summary). */
async function requestSingleReplyHop<Res extends { type: string }>(
  nc: NatsConnection,
  hop: Hop,
  request: HopRequest,
  replySchema: z.ZodType<Res | ErrorReply>,
  options: HopCallOptions,
): Promise<Res> {
  const subject = options.subject ?? buildHopSubject(hop, options.subjectPrefix);
  options.signal?.throwIfAborted();
  const abort = watchHopAbort(nc, hop, request.requestId, options.signal, options.subjectPrefix);
  const { span, headers } = startHopSpan(hop, request.requestId, subject, options.trace);
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
    const reply = decodeWireMessage(replySchema, msg.data, "reply");
    if (reply.type === "error") throw rebuildWireError((reply as ErrorReply).error);
    return reply as Res;
  } catch (error) {
    outcome = hopOutcome(error);
    throw error;
  } finally {
    abort.dispose();
    span.end(outcome);
  }
}
