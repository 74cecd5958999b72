import type { NatsConnection } from "@nats-io/nats-core";
import { WIRE_VERSION, buildCancelSubject, encodeWireMessage } from "../../../schema/wire/v1/index.ts";

/** Tells whichever node runs `requestId` to stop; fire-and-forget (a node that already finished ignores it). */
export function publishCancel(
  nc: NatsConnection,
  requestId: string,
  reason: string,
  subjectPrefix?: string,
): void {
  try {
    nc.publish(
      buildCancelSubject(subjectPrefix),
      encodeWireMessage({ version: WIRE_VERSION, type: "cancel", requestId, reason: reason.slice(0, 200) }),
    );
  } catch {
    // A closed connection cannot cancel; the node's own deadline still ends the hop.
  }
}
