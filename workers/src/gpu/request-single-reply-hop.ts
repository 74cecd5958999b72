import type { NatsConnection } from "@nats-io/nats-core";
import type { z } from "zod";
import {
  buildHopSubject,
  decodeWireMessage,
  encodeWireMessage,
  rebuildWireError,
  type ErrorReply,
  type Hop,
  type WireVersion,
} from "../../../schema/wire/v1/index.ts";
import { DEFAULT_REPLY_GRACE_MS, type HopCallOptions } from "./hop-call-options.ts";
import { mapNatsError } from "./map-nats-error.ts";
import { watchHopAbort } from "./watch-hop-abort.ts";

type HopRequest = { version: WireVersion; requestId: string; timeoutMs: number };

/** Request-reply for the hops that answer in one message (route, summary). */
export async function requestSingleReplyHop<Req extends HopRequest, Res extends { type: string }>(
  nc: NatsConnection,
  hop: Hop,
  request: Req,
  replySchema: z.ZodType<Res | ErrorReply>,
  options: HopCallOptions,
): Promise<Res> {
  const subject = options.subject ?? buildHopSubject(hop, options.subjectPrefix);
  options.signal?.throwIfAborted();
  const abort = watchHopAbort(nc, hop, request.requestId, options.signal, options.subjectPrefix);
  try {
    const msg = await Promise.race([
      nc.request(subject, encodeWireMessage(request), {
        timeout: request.timeoutMs + DEFAULT_REPLY_GRACE_MS,
      }),
      abort.aborted,
    ]).catch((error: unknown) => {
      throw mapNatsError(error, subject);
    });
    const reply = decodeWireMessage(replySchema, msg.data, "reply");
    if (reply.type === "error") throw rebuildWireError((reply as ErrorReply).error);
    return reply as Res;
  } finally {
    abort.dispose();
  }
}
