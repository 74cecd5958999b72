import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { WIRE_VERSION, toWireErrorPayload } from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../gpu/hop-client.ts";

export interface RouteQuestion {
  hops: HopClient;
  harness: HarnessDocument;
  now: () => number;
  conversationId: string;
  turnId: string;
  /** The router's prompt (its view plus the route cue). */
  prompt: string;
  forcedLabel?: string;
  /** Where to go when the router fails: the previous specialist, if the conversation had one. */
  previousLabel?: string;
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
    const result = await q.hops.route({
      version: WIRE_VERSION,
      type: "route",
      requestId: `${turnId}.route`,
      conversationId: q.conversationId,
      turnId,
      adapter: harness.router.adapter,
      view: q.prompt,
      labels: [...harness.router.labels],
      maxTokens: harness.router.maxTokens,
      reasoningMaxTokens: harness.router.reasoningMaxTokens,
      timeoutMs: harness.router.timeoutMs,
    });
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
