import type { NatsConnection } from "@nats-io/nats-core";
import {
  summaryReplySchema,
  summaryRequestSchema,
  type SummaryRequestInput,
  type SummaryResult,
} from "../../../schema/wire/v1/index.ts";
import type { HopCallOptions } from "./hop-call-options.ts";
import { requestSingleReplyHop } from "./request-single-reply-hop.ts";

/** Runs the summary hop on a GPU node (greedy, ≤ 192 tokens); rejects with a typed MolWireError. */
export function requestSummary(
  nc: NatsConnection,
  input: SummaryRequestInput,
  options: HopCallOptions = {},
): Promise<SummaryResult> {
  return requestSingleReplyHop(nc, "summary", summaryRequestSchema.parse(input), summaryReplySchema, options);
}
