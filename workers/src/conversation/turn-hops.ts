import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import {
  ProtocolError,
  WIRE_VERSION,
  toWireErrorPayload,
  type StartPart,
} from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../../../schema/wire/client/hop-client.ts";
import type { SamplingOverrides } from "./conversation-rpc.ts";
import { placeHop, type HopPlacement } from "./place-hop.ts";

export interface HopTimeouts {
  firstPartMs: number;
  stallMs: number;
  /**
   * Route and summary hops answer in one message: a node that dies or hangs meanwhile is only noticed by this
   * per-attempt deadline (capped by the harness' own), after which the hop goes to another node.
   */
  replyMs: number;
}

/** What every hop needs: the transport, where to send it, how long to wait, and the harness it runs under. */
export interface HopDeps {
  hops: HopClient;
  placement: HopPlacement;
  hopTimeouts: HopTimeouts;
  harness: HarnessDocument;
  /** Unix ms. */
  now: () => number;
}

interface HopTarget {
  /** The KV slot key on the GPU node: the conversation id, or the client's conversation key when stateless. */
  conversationId: string;
  /**
   * Which node the hop prefers, when not the slot key's: a stateless turn without a cache key gets a slot of its
   * own but still leans to the node that served the same opening (a hint, never a shared slot).
   */
  placementKey?: string | undefined;
  turnId: string;
  /** The hop's prompt (the adapter's view plus its cue). */
  prompt: string;
  /** The node that last ran this adapter for the conversation (its KV is warm there). */
  lastNodeId?: string | undefined;
}

export interface RouteQuestion extends HopTarget {
  forcedLabel?: string | undefined;
  /** Where to go when the router fails: the previous specialist, if the conversation had one. */
  previousLabel?: string | undefined;
}

/**
 * The route hop. A forced label skips it; a failed or timed-out route falls back to the previous specialist (the
 * conversation most likely stays on its topic), else the harness default, and records why.
 */
export async function decideRoute(
  deps: HopDeps,
  q: RouteQuestion,
): Promise<TimelineEventOf<"route_decision">> {
  const { harness } = deps;
  const { turnId } = q;
  if (q.forcedLabel) return { type: "route_decision", turnId, label: q.forcedLabel, source: "forced" };
  const started = deps.now();
  try {
    const { value: result, placement } = await placeHop(
      {
        placement: deps.placement,
        hop: "route",
        adapter: harness.router.adapter,
        conversationId: q.placementKey ?? q.conversationId,
        lastNodeId: q.lastNodeId,
        canRetry: () => true,
      },
      (subject, attempt) =>
        deps.hops.route(
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
            timeoutMs: Math.min(harness.router.timeoutMs, deps.hopTimeouts.replyMs),
          },
          { subject },
        ),
    );
    const { minConfidence } = harness.router;
    const keepPrevious =
      minConfidence !== undefined &&
      result.confidence !== undefined &&
      result.confidence < minConfidence &&
      q.previousLabel !== undefined;
    return {
      type: "route_decision",
      turnId,
      label: keepPrevious && q.previousLabel !== undefined ? q.previousLabel : result.label,
      source: "router",
      router: {
        nodeId: result.nodeId,
        usage: result.usage,
        nodeTimings: result.timings,
        edgeTimings: { totalMs: deps.now() - started },
        placement,
        rawText: result.rawText,
        ...(result.confidence === undefined ? {} : { confidence: result.confidence }),
        ...(keepPrevious ? { lowConfidenceLabel: result.label } : {}),
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

/** How far an answer hop got: what a cancelled or failed answer is charged by (the node's figures never came). */
export interface AnswerProgress {
  /** The node of the last attempt sent its `start` part, so it had the prompt. */
  nodeStarted: boolean;
  /** Characters of answer text forwarded to the client. */
  streamedChars: number;
}

export interface AnswerQuestion extends HopTarget {
  label: string;
  sampling?: SamplingOverrides | undefined;
  signal: AbortSignal;
  onDelta: (delta: string) => void;
  /** Updated as the hop runs, and still telling after it threw. */
  progress: AnswerProgress;
}

/**
 * Streams the answer hop, forwarding each delta. Before any text reached the client, a node that is gone, full,
 * hung or broken is replaced by another (same turn id). Once text has streamed, a lost node fails the turn
 * cleanly instead: a second node would write a different answer, and the client has already shown the first.
 */
export async function runAnswerHop(deps: HopDeps, q: AnswerQuestion): Promise<TimelineEventOf<"answer">> {
  const specialist = deps.harness.specialists[q.label];
  if (!specialist) throw new Error(`the harness has no specialist "${q.label}"`);
  const { progress } = q;
  const started = deps.now();
  const { value, placement } = await placeHop(
    {
      placement: deps.placement,
      hop: "answer",
      adapter: specialist.adapter,
      conversationId: q.placementKey ?? q.conversationId,
      lastNodeId: q.lastNodeId,
      canRetry: () => progress.streamedChars === 0 && !q.signal.aborted,
    },
    async (subject, attempt) => {
      let firstTokenAt: number | undefined;
      let start: StartPart | undefined;
      progress.nodeStarted = false;
      const parts = deps.hops.answer(
        {
          version: WIRE_VERSION,
          type: "answer",
          requestId: `${q.turnId}.answer.${attempt}`,
          conversationId: q.conversationId,
          turnId: q.turnId,
          adapter: specialist.adapter,
          view: q.prompt,
          sampling: { ...specialist.sampling, ...q.sampling },
          timeoutMs: specialist.answerTimeoutMs,
        },
        {
          subject,
          signal: q.signal,
          firstPartTimeoutMs: deps.hopTimeouts.firstPartMs,
          stallTimeoutMs: deps.hopTimeouts.stallMs,
        },
      );
      for await (const part of parts) {
        if (part.type === "start") {
          start = part;
          progress.nodeStarted = true;
        } else if (part.type === "text-delta") {
          firstTokenAt ??= deps.now();
          progress.streamedChars += part.delta.length;
          q.onDelta(part.delta);
        } else if (part.type === "tool-call-delta" || part.finishReason === "tool_calls") {
          // This hop asks for no tools, so a node that sends a call is broken.
          throw new ProtocolError("answer stream carried a function call that was not asked for");
        } else return { part: { ...part, finishReason: part.finishReason }, start, firstTokenAt };
      }
      throw new ProtocolError("answer stream ended without a finish part");
    },
  );
  const ended = deps.now();
  return {
    type: "answer",
    turnId: q.turnId,
    adapter: specialist.adapter,
    revision: value.start?.revision ?? "unknown",
    text: value.part.text,
    finishReason: value.part.finishReason,
    hop: {
      nodeId: value.start?.nodeId ?? "unknown",
      usage: value.part.usage,
      nodeTimings: value.part.timings,
      edgeTimings: { totalMs: ended - started, firstTokenMs: (value.firstTokenAt ?? ended) - started },
      placement,
    },
  };
}

/**
 * The summary hop: what other specialists will see of this turn. Its prompt is read lazily (it may not fit the
 * adapter's budget); any failure becomes a `summary_failed` event, never retried here.
 */
export async function summarizeTurn(
  deps: HopDeps,
  q: Omit<HopTarget, "prompt"> & { label: string; prompt: () => string },
): Promise<TimelineEventOf<"summary"> | TimelineEventOf<"summary_failed"> | undefined> {
  const specialist = deps.harness.specialists[q.label];
  if (!specialist) return undefined;
  const started = deps.now();
  try {
    const view = q.prompt();
    const { value: result, placement } = await placeHop(
      {
        placement: deps.placement,
        hop: "summary",
        adapter: specialist.adapter,
        conversationId: q.placementKey ?? q.conversationId,
        lastNodeId: q.lastNodeId,
        canRetry: () => true,
      },
      (subject, attempt) =>
        deps.hops.summary(
          {
            version: WIRE_VERSION,
            type: "summary",
            requestId: `${q.turnId}.summary.${attempt}`,
            conversationId: q.conversationId,
            turnId: q.turnId,
            adapter: specialist.adapter,
            view,
            maxTokens: specialist.summary.maxTokens,
            timeoutMs: Math.min(specialist.summary.timeoutMs, deps.hopTimeouts.replyMs),
          },
          { subject },
        ),
    );
    return {
      type: "summary",
      turnId: q.turnId,
      adapter: specialist.adapter,
      text: result.text,
      hop: {
        nodeId: result.nodeId,
        usage: result.usage,
        nodeTimings: result.timings,
        edgeTimings: { totalMs: deps.now() - started },
        placement,
      },
    };
  } catch (error) {
    const { code, message } = toWireErrorPayload(error);
    return { type: "summary_failed", turnId: q.turnId, adapter: specialist.adapter, code, message };
  }
}
