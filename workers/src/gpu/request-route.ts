import type { NatsConnection } from "@nats-io/nats-core";
import {
  routeReplySchema,
  routeRequestSchema,
  type RouteRequestInput,
  type RouteResult,
} from "../../../schema/wire/v1/index.ts";
import type { HopCallOptions } from "./hop-call-options.ts";
import { requestSingleReplyHop } from "./request-single-reply-hop.ts";

/** Runs the route hop on a GPU node; resolves with a valid label or rejects with a typed MolWireError. */
export function requestRoute(
  nc: NatsConnection,
  input: RouteRequestInput,
  options: HopCallOptions = {},
): Promise<RouteResult> {
  return requestSingleReplyHop(nc, "route", routeRequestSchema.parse(input), routeReplySchema, options);
}
