import { z } from "zod";
import type { TimelineEventOf } from "../db/timeline-event.ts";
import { renderAfterRouteLabel } from "../../../schema/harness/render-view-lines.ts";
import { toWireErrorPayload } from "../../../schema/wire/v2/index.ts";
import { generateChoice } from "../generate/generate-choice.ts";
import { defineStep, type StepContext, type StepDeps } from "./step-kind.ts";

export interface RouteQuestion {
  turnId: string;
  tenantId?: string | undefined;
  conversationId: string;
  placementKey?: string | undefined;
  /** The router's view with this turn's user line, as it will be appended, and the route cue. */
  prompt: string;
  forcedLabel?: string | undefined;
  /** Where to go when the router fails: the previous specialist, if the conversation had one. */
  previousLabel?: string | undefined;
  /** The node that last ran the router for the conversation (its KV is warm there). */
  lastNodeId?: string | undefined;
}

/**
 * The route decision. A forced label skips the router; else the router (`l0`) picks a label under a choice
 * constraint; a failed or timed-out route falls back to the previous specialist (the conversation most likely stays
 * on its topic), else the harness default, and records why. Under `router.minConfidence`, a less sure router keeps
 * the previous specialist.
 */
export async function decideRoute(
  deps: StepDeps,
  q: RouteQuestion,
): Promise<TimelineEventOf<"route_decision">> {
  const { harness } = deps;
  const { turnId } = q;
  if (q.forcedLabel) return { type: "route_decision", turnId, label: q.forcedLabel, source: "forced" };
  try {
    const routed = await generateChoice(deps, {
      purpose: "route",
      turnId,
      tenantId: q.tenantId,
      slotKey: q.conversationId,
      placementKey: q.placementKey,
      lastNodeId: q.lastNodeId,
      adapter: harness.router.adapter,
      prompt: q.prompt,
      choices: harness.router.labels,
      afterChoice: renderAfterRouteLabel(harness),
      reasoningMaxTokens: harness.router.reasoningMaxTokens,
      maxTokens: harness.router.maxTokens,
      timeoutMs: Math.min(harness.router.timeoutMs, deps.hopTimeouts.replyMs),
    });
    const { minConfidence } = harness.router;
    const keepPrevious =
      minConfidence !== undefined &&
      routed.confidence !== undefined &&
      routed.confidence < minConfidence &&
      q.previousLabel !== undefined;
    return {
      type: "route_decision",
      turnId,
      label: keepPrevious && q.previousLabel !== undefined ? q.previousLabel : routed.value,
      source: "router",
      router: {
        ...routed.facts,
        adapter: harness.router.adapter,
        rawText: routed.text,
        ...(routed.confidence === undefined ? {} : { confidence: routed.confidence }),
        ...(keepPrevious ? { lowConfidenceLabel: routed.value } : {}),
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

/** The route step: decides the turn's specialist from the router's view, then opens the turn under that decision. */
export const routeStep = defineStep({
  kind: "route",
  options: z.strictObject({}),
  async run(ctx: StepContext) {
    const { turn, timeline, stages, deps } = ctx;
    const question = stages.timeSync("views", () => ({
      prompt: timeline.routePrompt(ctx.incoming),
      previousLabel: timeline.lastAnsweredLabel(),
      lastNodeId: timeline.lastNodeFor(deps.harness.router.adapter),
    }));
    const decision = await stages.time("route", () =>
      decideRoute(deps, {
        turnId: turn.turnId,
        tenantId: turn.tenantId,
        conversationId: turn.conversationId,
        placementKey: turn.placementKey,
        forcedLabel: turn.forcedLabel,
        ...question,
      }),
    );
    await ctx.open(decision);
    return undefined;
  },
});
