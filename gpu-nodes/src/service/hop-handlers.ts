import {
  EngineFailureError,
  UnknownAdapterError,
  WIRE_VERSION,
  type AnswerRequest,
  type RouteRequest,
  type RouteResult,
  type StreamPart,
  type SummaryRequest,
  type SummaryResult,
} from "../../../schema/wire/v2/index.ts";
import type { Engine, EngineGenerateResult } from "../engine/engine.ts";
import { createAnswerOutput } from "./answer-output.ts";

/**
 * The node's side of the three hops: each turns a validated request into engine calls and a wire reply.
 * Named serve* because the edge has its own `runAnswerHop`, the client that sends this hop.
 */

/** What every hop runner needs besides its request: injected, so runners stay pure of I/O setup. */
export interface HopContext {
  engine: Engine;
  nodeId: string;
  now: () => number;
  signal: AbortSignal;
  /** When the request reached the node; queue time counts from here. */
  receivedAt: number;
  /** Time the hop waited in the node's fair queue before the engine saw it; part of `timings.queueMs`. */
  admissionMs: number;
}

/** A stream part before the writer stamps `version` and `seq`. */
export type StreamPartBody = StreamPart extends infer P
  ? P extends StreamPart
    ? Omit<P, "version" | "seq">
    : never
  : never;

/**
 * The answer hop: `start`, then one `text-delta` per decoded chunk (or, for a function call, `tool-call-delta`
 * parts), then `finish`. It throws typed errors; the
 * caller turns them into the stream's single `error` part.
 */
export async function serveAnswerHop(
  request: AnswerRequest,
  ctx: HopContext,
  emit: (part: StreamPartBody) => void,
): Promise<void> {
  const adapter = ctx.engine.adapters.find((a) => a.id === request.adapter);
  if (!adapter) throw new UnknownAdapterError(`adapter "${request.adapter}" is not loaded on this node`);
  emit({
    type: "start",
    requestId: request.requestId,
    nodeId: ctx.nodeId,
    adapter: request.adapter,
    revision: adapter.revision,
  });
  const { sampling } = request;
  const output = createAnswerOutput(request.constraint, emit);
  const result = await ctx.engine.generate({
    adapter: request.adapter,
    conversationId: request.conversationId,
    prompt: request.view,
    maxTokens: sampling.maxTokens,
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    seed: sampling.seed,
    stop: sampling.stop,
    signal: ctx.signal,
    ...(output.engineConstraint === undefined ? {} : { constraint: output.engineConstraint }),
    onTextDelta: (delta) => {
      output.onTextDelta(delta);
    },
  });
  emit({
    type: "finish",
    ...output.finish(result),
    usage: result.usage,
    timings: {
      queueMs: ctx.admissionMs + result.queueMs,
      prefillMs: result.prefillMs,
      decodeMs: result.decodeMs,
      totalMs: ctx.now() - ctx.receivedAt,
    },
  });
}

const GREEDY = { temperature: 0, topP: 1, topK: 1 } as const;
/** Ends the optional reasoning prefix; the label is decoded on the next line. */
const REASONING_END = "\n";

/**
 * The route hop: decode one label under a grammar that admits only the labels. With a reasoning budget, a
 * short free-text prefix is decoded first (stopping at a newline or its budget), then the label; the schema
 * guarantees reasoning + longest label fits `maxTokens`, so the label is never cut off.
 */
export async function serveRouteHop(request: RouteRequest, ctx: HopContext): Promise<RouteResult> {
  const failed = ctx.engine.failedAdapters?.find((a) => a.id === request.adapter);
  if (failed) {
    throw new UnknownAdapterError(
      `adapter "${request.adapter}" failed to load on this node: ${failed.reason}`,
    );
  }
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
    ...(request.afterLabel !== undefined && request.reasoningMaxTokens === 0
      ? { afterChoice: request.afterLabel }
      : {}),
  });
  steps.push(labelStep);
  const label = labelStep.text.trim();
  if (!request.labels.includes(label)) {
    throw new EngineFailureError(`route decoded ${JSON.stringify(label)}, which is not one of the labels`);
  }
  const confidence = labelStep.choiceProbabilities?.[label];
  const first = steps[0] as EngineGenerateResult;
  const usage = {
    promptTokens: first.usage.promptTokens,
    cachedPromptTokens: first.usage.cachedPromptTokens,
    evaluatedPromptTokens: steps.reduce((n, s) => n + s.usage.evaluatedPromptTokens, 0),
    completionTokens: steps.reduce((n, s) => n + s.usage.completionTokens, 0),
  };
  const totalMs = ctx.now() - ctx.receivedAt;
  const queueMs = ctx.admissionMs + steps.reduce((n, s) => n + s.queueMs, 0);
  const prefillMs = first.prefillMs;
  return {
    version: WIRE_VERSION,
    type: "route-result",
    requestId: request.requestId,
    nodeId: ctx.nodeId,
    label,
    rawText: reasoning + labelStep.text,
    ...(confidence === undefined ? {} : { confidence }),
    usage,
    timings: { queueMs, prefillMs, decodeMs: Math.max(0, totalMs - queueMs - prefillMs), totalMs },
  };
}

/** The summary hop: greedy decoding, so the same view always yields the same summary. */
export async function serveSummaryHop(request: SummaryRequest, ctx: HopContext): Promise<SummaryResult> {
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
    lane: "summary",
    // Held back behind routes and answers for at most half the time left, so it keeps the rest to run in.
    deferrableMs: Math.max(0, (request.timeoutMs - (ctx.now() - ctx.receivedAt)) / 2),
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
      queueMs: ctx.admissionMs + result.queueMs,
      prefillMs: result.prefillMs,
      decodeMs: result.decodeMs,
      totalMs: ctx.now() - ctx.receivedAt,
    },
  };
}
