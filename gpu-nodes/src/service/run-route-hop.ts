import {
  EngineFailureError,
  WIRE_VERSION,
  type RouteRequest,
  type RouteResult,
} from "../../../schema/wire/v1/index.ts";
import type { EngineGenerateResult } from "../engine/engine.ts";
import type { HopContext } from "./hop-context.ts";

const GREEDY = { temperature: 0, topP: 1, topK: 1 } as const;
/** Ends the optional reasoning prefix; the label is decoded on the next line. */
const REASONING_END = "\n";

/**
 * The route hop: decode one label under a grammar that admits only the labels. With a reasoning budget, a
 * short free-text prefix is decoded first (stopping at a newline or its budget), then the label; the schema
 * guarantees reasoning + longest label fits `maxTokens`, so the label is never cut off.
 */
export async function runRouteHop(request: RouteRequest, ctx: HopContext): Promise<RouteResult> {
  const base = {
    adapter: request.adapter,
    conversationId: request.conversationId,
    signal: ctx.signal,
    ...GREEDY,
  };
  const steps: EngineGenerateResult[] = [];
  let prompt = request.view;
  let reasoning = "";
  if (request.reasoningMaxTokens > 0) {
    const step = await ctx.engine.generate({
      ...base,
      prompt,
      maxTokens: request.reasoningMaxTokens,
      stop: [REASONING_END],
    });
    steps.push(step);
    reasoning = step.text + REASONING_END;
    prompt += reasoning;
  }
  const spent = steps.reduce((n, s) => n + s.usage.completionTokens, 0);
  const labelStep = await ctx.engine.generate({
    ...base,
    prompt,
    maxTokens: request.maxTokens - spent,
    stop: [],
    constraint: { type: "choice", choices: request.labels },
  });
  steps.push(labelStep);
  const label = labelStep.text.trim();
  if (!request.labels.includes(label)) {
    throw new EngineFailureError(`route decoded ${JSON.stringify(label)}, which is not one of the labels`);
  }
  const first = steps[0] as EngineGenerateResult;
  const usage = {
    promptTokens: first.usage.promptTokens,
    cachedPromptTokens: first.usage.cachedPromptTokens,
    evaluatedPromptTokens: steps.reduce((n, s) => n + s.usage.evaluatedPromptTokens, 0),
    completionTokens: steps.reduce((n, s) => n + s.usage.completionTokens, 0),
  };
  const totalMs = ctx.now() - ctx.receivedAt;
  const queueMs = steps.reduce((n, s) => n + s.queueMs, 0);
  const prefillMs = first.prefillMs;
  return {
    version: WIRE_VERSION,
    type: "route-result",
    requestId: request.requestId,
    nodeId: ctx.nodeId,
    label,
    rawText: reasoning + labelStep.text,
    usage,
    timings: { queueMs, prefillMs, decodeMs: Math.max(0, totalMs - queueMs - prefillMs), totalMs },
  };
}
