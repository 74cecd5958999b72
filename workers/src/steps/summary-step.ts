import { z } from "zod";
import type { TimelineEventOf } from "../db/timeline-event.ts";
import { findSpecialist } from "../../../schema/harness/harness-settings.ts";
import { toWireErrorPayload } from "../../../schema/wire/v2/index.ts";
import { generateText } from "../generate/generate-text.ts";
import { defineStep, type StepContext } from "./step-kind.ts";

/**
 * The summary: what the other specialists will see of this turn (≤ 192 tokens by the harness schema), written by the
 * specialist that answered, greedily, in the background. Its prompt is read before anything awaits, so before the
 * next turn may append (the turn loop starts background steps before it lets the next turn in). A failure becomes
 * `summary_failed`, never retried here. Stored conversations only: a stateless turn has no later turn to read it.
 */
export async function summarizeTurn(
  ctx: StepContext,
): Promise<TimelineEventOf<"summary"> | TimelineEventOf<"summary_failed"> | undefined> {
  const { turn, timeline, deps } = ctx;
  const summaryPrompt = timeline.summaryPrompt?.bind(timeline);
  const label = turn.label;
  const specialist = label === undefined ? undefined : findSpecialist(deps.harness, label);
  if (!turn.answer || !summaryPrompt || label === undefined || !specialist) return undefined;
  const { adapter } = specialist;
  // Asked for before this summary is recorded as running: it goes out once the previous one has settled.
  const previous = ctx.summaries?.turnFor(adapter);
  const summarized = (async () => {
    try {
      const prompt = summaryPrompt(label);
      await previous;
      const summary = await generateText(deps, {
        purpose: "summary",
        turnId: turn.turnId,
        tenantId: turn.tenantId,
        slotKey: turn.conversationId,
        placementKey: turn.placementKey,
        lastNodeId: timeline.lastNodeFor(adapter),
        adapter,
        prompt,
        maxTokens: specialist.summary.maxTokens,
        timeoutMs: specialist.summary.timeoutMs,
      });
      return {
        type: "summary",
        turnId: turn.turnId,
        adapter,
        text: summary.text,
        hop: summary.facts,
      } as const;
    } catch (error) {
      const { code, message } = toWireErrorPayload(error);
      return { type: "summary_failed", turnId: turn.turnId, adapter, code, message } as const;
    }
  })();
  const appended = summarized.then((event) => ctx.append(event));
  ctx.summaries?.add(turn.turnId, adapter, appended);
  await appended;
  return await summarized;
}

/** The summary step (see {@link summarizeTurn}); its webhook event follows it. */
export const summaryStep = defineStep({
  kind: "summary",
  options: z.strictObject({}),
  async run(ctx) {
    const summary = await summarizeTurn(ctx);
    if (summary) await ctx.emit("summary");
    return undefined;
  },
});
