import {
  BadRequestError,
  EngineFailureError,
  UnknownAdapterError,
  isLatencyClass,
  parseAdapterName,
  type ChoiceConstraint,
  type GenerateOutcome,
  type GenerateRequest,
  type StreamPart,
} from "../../../schema/wire/v2/index.ts";
import type { Engine, EngineAdapterInfo, EngineGenerateResult } from "../engine/engine.ts";
import { createAnswerOutput } from "./answer-output.ts";

/**
 * The node's side of the one request it serves: a validated `generate` request becomes engine calls, and what they
 * return becomes the reply. What the node optimises follows the request's fields, never a hop's name: a `choice`
 * constraint is scored exactly (and its `afterChoice` extends the slot for the next prompt), `priority` picks the
 * admission lane, the KV slot pool and whether the work yields to latency-critical requests.
 */

/** What a request needs besides itself: injected, so the handler stays pure of I/O setup. */
export interface GenerateContext {
  engine: Engine;
  nodeId: string;
  now: () => number;
  signal: AbortSignal;
  /** When the request reached the node; queue time counts from here. */
  receivedAt: number;
  /** Time the request waited in the node's fair queue before the engine saw it; part of `timings.queueMs`. */
  admissionMs: number;
}

/** A stream part before the writer stamps `version` and `seq`. */
export type StreamPartBody = StreamPart extends infer P
  ? P extends StreamPart
    ? Omit<P, "version" | "seq">
    : never
  : never;

/** A finished generation: who served it and what it produced (the `result` reply, or the `finish` part). */
export interface ServedGeneration extends GenerateOutcome {
  adapter: string;
  revision: string;
}

/** The adapter revision a request names: its exact name, or for a bare label the engine's default revision. */
export function resolveAdapter(engine: Engine, requested: string): EngineAdapterInfo {
  const held = engine.resolveAdapter(requested);
  if (held) return held;
  const { label } = parseAdapterName(requested);
  const failed = engine.failedAdapters?.find((a) => a.id === label);
  if (failed)
    throw new UnknownAdapterError(`adapter "${label}" failed to load on this node: ${failed.reason}`);
  throw new UnknownAdapterError(`adapter "${requested}" is not loaded on this node`);
}

/**
 * Serves one request: `start` (with the revision that serves it) goes to `emit` as soon as the adapter is resolved,
 * then the output's deltas; returns the outcome, which the caller sends as `finish` or as the `result` reply. It
 * throws typed errors; the caller turns them into the reply's single `error`.
 */
export async function serveGenerate(
  request: GenerateRequest,
  ctx: GenerateContext,
  emit: (part: StreamPartBody) => void,
): Promise<ServedGeneration> {
  if (request.return.tokens && !ctx.engine.features?.includes("return:tokens")) {
    throw new BadRequestError(
      `this node's engine (${ctx.engine.kind}) does not return token ids with logprobs`,
    );
  }
  const adapter = resolveAdapter(ctx.engine, request.adapter);
  const served = { adapter: adapter.name, revision: adapter.revision };
  emit({ type: "start", requestId: request.requestId, nodeId: ctx.nodeId, ...served });
  const constraint = request.constraint;
  const outcome =
    constraint?.type === "choice"
      ? await generateChoice(request, constraint, adapter, ctx)
      : await generateOutput(request, adapter, ctx, emit);
  return { ...served, ...outcome };
}

/** The engine request fields every call of one generate request shares. */
function engineBase(request: GenerateRequest, adapter: EngineAdapterInfo, ctx: GenerateContext) {
  const background = !isLatencyClass(request.priority);
  return {
    // The revision resolved above, by name: a bare label could meet another default once the engine has moved on.
    adapter: adapter.name,
    conversationId: request.slotKey,
    ...(request.tenantId === undefined ? {} : { tenantId: request.tenantId }),
    signal: ctx.signal,
    ...(background
      ? {
          lane: "summary" as const,
          // Held back behind latency work for at most half the time left, so it keeps the rest to run in.
          deferrableMs: Math.max(0, (request.timeoutMs - (ctx.now() - ctx.receivedAt)) / 2),
        }
      : {}),
  };
}

/**
 * Node timings of a request's engine calls: queue (admission and slot waits), the first call's prefill, and the
 * rest as decode: for one free-text call the engine's own decode time; for a choice, everything after the first
 * prefill (scoring the choices, and any reasoning).
 */
function timingsOf(
  ctx: GenerateContext,
  results: readonly EngineGenerateResult[],
  decode: "engine" | "rest",
) {
  const first = results[0] as EngineGenerateResult;
  const totalMs = ctx.now() - ctx.receivedAt;
  const queueMs = ctx.admissionMs + results.reduce((n, r) => n + r.queueMs, 0);
  const prefillMs = first.prefillMs;
  const decodeMs = decode === "engine" ? first.decodeMs : Math.max(0, totalMs - queueMs - prefillMs);
  return { queueMs, prefillMs, decodeMs, totalMs };
}

/** Ends the optional reasoning prefix; the choice is decoded on the next line. */
const REASONING_END = "\n";

/**
 * One of the choices. With a reasoning budget, a short free-text prefix is decoded first (stopping at a newline or
 * its budget), then the choice; the schema guarantees reasoning + longest choice fits `maxTokens`, so the choice is
 * never cut off.
 */
async function generateChoice(
  request: GenerateRequest,
  constraint: ChoiceConstraint,
  adapter: EngineAdapterInfo,
  ctx: GenerateContext,
): Promise<GenerateOutcome> {
  const { sampling } = request;
  const base = {
    ...engineBase(request, adapter, ctx),
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    seed: sampling.seed,
  };
  const steps: EngineGenerateResult[] = [];
  let prompt = request.prompt;
  let reasoning = "";
  if (constraint.reasoningMaxTokens > 0) {
    const step = await ctx.engine.generate({
      ...base,
      prompt,
      maxTokens: constraint.reasoningMaxTokens,
      stop: [REASONING_END],
    });
    steps.push(step);
    reasoning = step.text + REASONING_END;
    prompt += reasoning;
  }
  const spent = steps.reduce((n, s) => n + s.usage.completionTokens, 0);
  const choiceStep = await ctx.engine.generate({
    ...base,
    prompt,
    maxTokens: sampling.maxTokens - spent,
    stop: [],
    constraint: { type: "choice", choices: constraint.choices },
    ...(constraint.afterChoice !== undefined && constraint.reasoningMaxTokens === 0
      ? { afterChoice: constraint.afterChoice }
      : {}),
  });
  steps.push(choiceStep);
  const value = choiceStep.text.trim();
  if (!constraint.choices.includes(value)) {
    throw new EngineFailureError(`decoded ${JSON.stringify(value)}, which is not one of the choices`);
  }
  const first = steps[0] as EngineGenerateResult;
  const probabilities = request.return.choiceProbabilities ? choiceStep.choiceProbabilities : undefined;
  return {
    finishReason: "stop",
    text: reasoning + choiceStep.text,
    choice: { value, ...(probabilities === undefined ? {} : { probabilities }) },
    usage: {
      promptTokens: first.usage.promptTokens,
      cachedPromptTokens: first.usage.cachedPromptTokens,
      evaluatedPromptTokens: steps.reduce((n, s) => n + s.usage.evaluatedPromptTokens, 0),
      completionTokens: steps.reduce((n, s) => n + s.usage.completionTokens, 0),
    },
    timings: timingsOf(ctx, steps, "rest"),
  };
}

/**
 * Free text, or output under a JSON, tools or grammar constraint: one engine call whose deltas go to `emit` as
 * they are decoded (function calls as `tool-call-delta` parts).
 */
async function generateOutput(
  request: GenerateRequest,
  adapter: EngineAdapterInfo,
  ctx: GenerateContext,
  emit: (part: StreamPartBody) => void,
): Promise<GenerateOutcome> {
  const { sampling, constraint } = request;
  const output = createAnswerOutput(constraint?.type === "choice" ? undefined : constraint, emit);
  const result = await ctx.engine.generate({
    ...engineBase(request, adapter, ctx),
    prompt: request.prompt,
    maxTokens: sampling.maxTokens,
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    seed: sampling.seed,
    stop: sampling.stop,
    ...(output.engineConstraint === undefined ? {} : { constraint: output.engineConstraint }),
    onTextDelta: (delta) => {
      output.onTextDelta(delta);
    },
  });
  return { ...output.finish(result), usage: result.usage, timings: timingsOf(ctx, [result], "engine") };
}
