import type { Placement } from "../../../schema/db/timeline-event.ts";
import {
  buildHopSubject,
  buildNodeHopSubject,
  toWireErrorPayload,
  type Hop,
} from "../../../schema/wire/v1/index.ts";
import { chooseNode } from "../fleet/choose-node.ts";
import type { HopPlacement } from "../fleet/fleet-view.ts";

export type { HopPlacement } from "../fleet/fleet-view.ts";

/** Tries per hop: the first node, then two others, before the hop fails. */
export const MAX_HOP_ATTEMPTS = 3;

/** Codes where another node may well succeed: it is gone, full, or broke before answering. */
const FAILOVER_CODES = new Set([
  "no_responders",
  "overloaded",
  "engine_failure",
  "protocol_error",
  "deadline_exceeded",
]);

export interface PlaceHopQuestion {
  placement: HopPlacement;
  hop: Hop;
  adapter: string;
  conversationId: string;
  lastNodeId?: string | undefined;
  /** Features the node must advertise (an answer under an output constraint, see node-status `features`). */
  requires?: readonly string[] | undefined;
  /** Whether a failure may be retried elsewhere (e.g. only before any answer text reached the client). */
  canRetry: (error: unknown) => boolean;
}

/**
 * Runs a hop on the node placement picks, failing over to the next best node (never one that already failed this
 * hop) on errors another node may not have. Returns the value and the placement record for the timeline.
 */
export async function placeHop<T>(
  q: PlaceHopQuestion,
  call: (subject: string, attempt: number) => Promise<T>,
): Promise<{ value: T; placement: Placement }> {
  const failed = new Set<string>();
  const attempts: Placement["attempts"] = [];
  for (let attempt = 1; ; attempt++) {
    const choice = chooseNode({
      // Without fleet information the hop still runs, on the queue group.
      nodes: await q.placement.nodes().catch(() => []),
      adapter: q.adapter,
      conversationId: q.conversationId,
      ...(q.lastNodeId ? { lastNodeId: q.lastNodeId } : {}),
      exclude: failed,
      ...(q.requires && q.requires.length > 0 ? { requires: q.requires } : {}),
    });
    const subject = choice.nodeId
      ? buildNodeHopSubject(choice.nodeId, q.hop, q.placement.subjectPrefix)
      : buildHopSubject(q.hop, q.placement.subjectPrefix);
    try {
      const value = await call(subject, attempt);
      const spill = choice.spilledFrom ? { spilledFrom: choice.spilledFrom } : {};
      return { value, placement: { reason: choice.reason, ...spill, attempts } };
    } catch (error) {
      const { code } = toWireErrorPayload(error);
      const retry = attempt < MAX_HOP_ATTEMPTS && FAILOVER_CODES.has(code) && q.canRetry(error);
      if (!retry) throw error;
      attempts.push({ ...(choice.nodeId ? { nodeId: choice.nodeId } : {}), code });
      if (choice.nodeId) failed.add(choice.nodeId);
    }
  }
}
