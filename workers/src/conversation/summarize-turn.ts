import { WIRE_VERSION, toWireErrorPayload } from "../../../schema/wire/v1/index.ts";
import { renderSummaryPrompt } from "../views/render-prompts.ts";
import { placeHop } from "./place-hop.ts";
import type { TurnContext } from "./turn-context.ts";

/** The summary hop: what other specialists will see of this turn. A failure is recorded, never retried here. */
export async function summarizeTurn(ctx: TurnContext, turnId: string, label: string): Promise<void> {
  const { harness, timeline } = ctx;
  const specialist = harness.specialists[label];
  if (!specialist) return;
  const started = ctx.now();
  try {
    const view = renderSummaryPrompt(timeline.views, label, harness);
    const { value: result, placement } = await placeHop(
      {
        placement: ctx.placement,
        hop: "summary",
        adapter: specialist.adapter,
        conversationId: ctx.conversationId,
        lastNodeId: timeline.lastNodeFor(specialist.adapter),
        canRetry: () => true,
      },
      (subject, attempt) =>
        ctx.hops.summary(
          {
            version: WIRE_VERSION,
            type: "summary",
            requestId: `${turnId}.summary.${attempt}`,
            conversationId: ctx.conversationId,
            turnId,
            adapter: specialist.adapter,
            view,
            maxTokens: specialist.summary.maxTokens,
            timeoutMs: Math.min(specialist.summary.timeoutMs, ctx.hopTimeouts.replyMs),
          },
          { subject },
        ),
    );
    timeline.append({
      type: "summary",
      turnId,
      adapter: specialist.adapter,
      text: result.text,
      hop: {
        nodeId: result.nodeId,
        usage: result.usage,
        nodeTimings: result.timings,
        edgeTimings: { totalMs: ctx.now() - started },
        placement,
      },
    });
  } catch (error) {
    const { code, message } = toWireErrorPayload(error);
    timeline.append({ type: "summary_failed", turnId, adapter: specialist.adapter, code, message });
  }
}
