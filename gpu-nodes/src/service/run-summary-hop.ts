import { WIRE_VERSION, type SummaryRequest, type SummaryResult } from "../../../schema/wire/v1/index.ts";
import type { HopContext } from "./hop-context.ts";

/** The summary hop: greedy decoding, so the same view always yields the same summary. */
export async function runSummaryHop(request: SummaryRequest, ctx: HopContext): Promise<SummaryResult> {
  const result = await ctx.engine.generate({
    adapter: request.adapter,
    conversationId: request.conversationId,
    prompt: request.view,
    maxTokens: request.maxTokens,
    temperature: 0,
    topP: 1,
    topK: 1,
    stop: [],
    signal: ctx.signal,
  });
  return {
    version: WIRE_VERSION,
    type: "summary-result",
    requestId: request.requestId,
    nodeId: ctx.nodeId,
    text: result.text.trim(),
    finishReason: result.finishReason,
    usage: result.usage,
    timings: {
      queueMs: result.queueMs,
      prefillMs: result.prefillMs,
      decodeMs: result.decodeMs,
      totalMs: ctx.now() - ctx.receivedAt,
    },
  };
}
