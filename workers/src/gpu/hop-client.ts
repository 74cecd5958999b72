import type { NatsConnection } from "@nats-io/nats-core";
import type {
  AnswerRequestInput,
  RouteRequestInput,
  RouteResult,
  SummaryRequestInput,
  SummaryResult,
} from "../../../schema/wire/v1/index.ts";
import type { HopCallOptions } from "./hop-call-options.ts";
import { requestRoute } from "./request-route.ts";
import { requestSummary } from "./request-summary.ts";
import { streamAnswer, type AnswerStreamPart } from "./stream-answer.ts";

/** The three hops as the conversation logic sees them; the transport (NATS) stays behind this type. */
export interface HopClient {
  route(input: RouteRequestInput, options?: HopCallOptions): Promise<RouteResult>;
  answer(input: AnswerRequestInput, options?: HopCallOptions): AsyncIterable<AnswerStreamPart>;
  summary(input: SummaryRequestInput, options?: HopCallOptions): Promise<SummaryResult>;
}

/** Hops over NATS; the connection is resolved per call so a reconnecting or replaced connection is picked up. */
export function createNatsHopClient(
  connection: () => Promise<NatsConnection>,
  subjectPrefix?: string,
): HopClient {
  const withPrefix = (options?: HopCallOptions): HopCallOptions => ({ subjectPrefix, ...options });
  return {
    route: async (input, options) => requestRoute(await connection(), input, withPrefix(options)),
    summary: async (input, options) => requestSummary(await connection(), input, withPrefix(options)),
    async *answer(input, options) {
      yield* streamAnswer(await connection(), input, withPrefix(options));
    },
  };
}
