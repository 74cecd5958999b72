import type { Placement } from "../../../schema/api/hop-facts.ts";
import { toWireErrorPayload } from "../../../schema/wire/v2/index.ts";
import type { HopPlacement, PlacementDecision, PlacementRequest } from "../fleet/hop-placement.ts";

export type { HopPlacement } from "../fleet/hop-placement.ts";

/** Tries per hop: the first node, then two others, before the hop fails. */
export const MAX_HOP_ATTEMPTS = 3;

/**
 * Codes where another node may well succeed: it is gone, full, or broke before answering. A node queues hops up to
 * its bound, so `overloaded` means its queue is full: another node, not a wait here, is the right next try.
 */
const QUEUE_GROUP: PlacementDecision = { reason: "queue-group", settle: () => undefined };

const FAILOVER_CODES = new Set([
  "no_responders",
  "overloaded",
  "engine_failure",
  "protocol_error",
  "deadline_exceeded",
]);

/** A hop to place: what placement is asked (the nodes that failed it are added per attempt), and its retry rule. */
export interface PlaceHopQuestion extends Omit<PlacementRequest, "exclude"> {
  placement: HopPlacement;
  /** Whether a failure may be retried elsewhere (e.g. only before any answer text reached the client). */
  canRetry: (error: unknown) => boolean;
}

/**
 * Runs a hop on the node placement picks, failing over to the next best node (never one that already failed this
 * hop) on errors another node may not have. Returns the value and the placement record for the timeline.
 */
export async function placeHop<T>(
  q: PlaceHopQuestion,
  /** Sends the request to `nodeId` (undefined: the queue group, any node); the transport builds the subject. */
  call: (nodeId: string | undefined, attempt: number) => Promise<T>,
  /**
   * What the node holds of the pair once the hop answered, in estimatePromptTokens units: its prompt and the text
   * it generated. Absent: the prompt alone.
   */
  heldTokens?: (value: T) => number,
): Promise<{ value: T; placement: Placement }> {
  const failed = new Set<string>();
  const attempts: Placement["attempts"] = [];
  for (let attempt = 1; ; attempt++) {
    // Without fleet information (or for the queue-group baseline) the hop still runs, on the queue group.
    const decision: PlacementDecision =
      q.placement.picksNodes === false
        ? QUEUE_GROUP
        : await q.placement
            .place({
              hop: q.hop,
              adapter: q.adapter,
              conversationId: q.conversationId,
              lastNodeId: q.lastNodeId,
              requires: q.requires,
              promptTokens: q.promptTokens,
              exclude: [...failed],
            })
            .catch(() => QUEUE_GROUP);
    const { settle, ...choice } = decision;
    let held: number | undefined;
    try {
      const value = await call(choice.nodeId, attempt);
      held = heldTokens?.(value);
      const spill = choice.spilledFrom ? { spilledFrom: choice.spilledFrom } : {};
      return { value, placement: { reason: choice.reason, ...spill, attempts } };
    } catch (error) {
      const { code } = toWireErrorPayload(error);
      const retry = attempt < MAX_HOP_ATTEMPTS && FAILOVER_CODES.has(code) && q.canRetry(error);
      if (!retry) throw error;
      attempts.push({ ...(choice.nodeId ? { nodeId: choice.nodeId } : {}), code });
      if (choice.nodeId) failed.add(choice.nodeId);
    } finally {
      settle(held);
    }
  }
}
