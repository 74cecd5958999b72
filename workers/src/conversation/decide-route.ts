import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { WIRE_VERSION, toWireErrorPayload } from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../gpu/hop-client.ts";
import { placeHop, type HopPlacement } from "./place-hop.ts";
import type { HopTimeouts } from "./turn-context.ts";

export interface RouteQuestion {
  hops: HopClient;
  placement: HopPlacement;
  hopTimeouts: HopTimeouts;
  harness: HarnessDocument;
  now: () => number;
  conversationId: string;
  turnId: string;
  /** The router's prompt (its view plus the route cue). */
  prompt: string;
  forcedLabel?: string;
  /** Where to go when the router fails: the previous specialist, if the conversation had one. */
  previousLabel?: string;
  /** The node that ran this conversation's last route hop (its router KV is warm there). */
  lastNodeId?: string;
}

/**
 * The route hop. A forced label skips it; a failed or timed-out route falls back to the previous specialist (the
 * conversation most likely stays on its topic), else the harness default, and records why.
 */
export async function decideRoute(q: RouteQuestion): Promise<TimelineEventOf<"route_decision">> {
  const { harness, turnId } = q;
  if (q.forcedLabel) return { type: "route_decision", turnId, label: q.forcedLabel, source: "forced" };
  const started = q.now();
  try {
    const { value: result, placement } = await placeHop(
      {
        placement: q.placement,
        hop: "route",
        adapter: harness.router.adapter,
        conversationId: q.conversationId,
        lastNodeId: q.lastNodeId,
        canRetry: () => true,
      },
      (subject, attempt) =>
        q.hops.route(
          {
            version: WIRE_VERSION,
            type: "route",
            requestId: `${turnId}.route.${attempt}`,
            conversationId: q.conversationId,
            turnId,
            adapter: harness.router.adapter,
            view: q.prompt,
            labels: [...harness.router.labels],
            maxTokens: harness.router.maxTokens,
            reasoningMaxTokens: harness.router.reasoningMaxTokens,
            timeoutMs: Math.min(harness.router.timeoutMs, q.hopTimeouts.replyMs),
          },
          { subject },
        ),
    );
    return {
      type: "route_decision",
      turnId,
      label: result.label,
      source: "router",
      router: {
        nodeId: result.nodeId,
        usage: result.usage,
        nodeTimings: result.timings,
        edgeTimings: { totalMs: q.now() - started },
        placement,
        rawText: result.rawText,
      },
    };
  } catch (error) {
    const { code, message } = toWireErrorPayload(error);
    return {
      type: "route_decision",
      turnId,
      label: q.previousLabel ?? harness.defaultLabel,
      source: "fallback",
      fallback: { code, message, to: q.previousLabel ? "previous" : "default" },
    };
  }
}
