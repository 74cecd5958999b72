import type { AnswerTakeover, TimelineEventOf } from "../db/timeline-event.ts";
import { stripSpecialSentinels } from "../../../schema/harness/chat-templates.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { renderAfterRouteLabel } from "../../../schema/harness/render-view-lines.ts";
import {
  DEFAULT_ANSWER_MAX_TOKENS,
  ProtocolError,
  WIRE_VERSION,
  toWireErrorPayload,
  type NodeFeature,
  type OutputConstraint,
  type StartPart,
  type ToolCallDeltaPart,
} from "../../../schema/wire/v2/index.ts";
import { renderToolCallText } from "./tool-turn-text.ts";
import type { HopClient } from "../nats/hop-client.ts";
import type { SamplingOverrides } from "./conversation-rpc.ts";
import { estimatePromptTokens } from "../fleet/placement-ledger.ts";
import { placeHop, type HopPlacement, type HopTargetNode } from "./place-hop.ts";

export interface HopTimeouts {
  firstPartMs: number;
  stallMs: number;
  /**
   * Route hops answer in one message: a node that dies or hangs meanwhile is only noticed by this per-attempt
   * deadline (capped by the harness' own), after which the hop goes to another node. Summary hops keep their
   * harness timeout (30 s by default) instead: nothing waits on them, and a node may hold one back while
   * routes and answers run, for up to half of it (gpu-nodes/src/engine/hop-priority.ts), so that a client's
   * back-to-back turns seldom decode beside it; a node lost under a summary costs only a later summary.
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
  /** Whose turn it is: nodes queue hops fairly per tenant. */
  tenantId?: string | undefined;
  /** The hop's prompt (the adapter's view plus its cue). */
  prompt: string;
  /** The node that last ran this adapter for the conversation (its KV is warm there). */
  lastNodeId?: string | undefined;
}

/** The tenant field of a hop request, for a node that queues by tenant. */
function tenantOf(q: { tenantId?: string | undefined }, node: HopTargetNode): { tenantId?: string } {
  return q.tenantId !== undefined && node.queuesByTenant ? { tenantId: q.tenantId } : {};
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
        promptTokens: estimatePromptTokens(q.prompt),
        canRetry: () => true,
      },
      (subject, attempt, node) =>
        deps.hops.route(
          {
            version: WIRE_VERSION,
            type: "route",
            requestId: `${turnId}.route.${attempt}`,
            conversationId: q.conversationId,
            turnId,
            ...tenantOf(q, node),
            adapter: harness.router.adapter,
            view: q.prompt,
            labels: [...harness.router.labels],
            maxTokens: harness.router.maxTokens,
            reasoningMaxTokens: harness.router.reasoningMaxTokens,
            afterLabel: renderAfterRouteLabel(harness),
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
  /** What the answer is decoded under (tools, JSON); absent: free text. */
  constraint?: OutputConstraint | undefined;
  /** Each slice of a function call's arguments, under a `tools` constraint. */
  onToolCallDelta?: (part: Pick<ToolCallDeltaPart, "index" | "id" | "name" | "argumentsDelta">) => void;
  /** Updated as the hop runs, and still telling after it threw. */
  progress: AnswerProgress;
}

/** The node features an answer under `constraint` needs (node-status `NODE_FEATURES`). */
export function requiredFeatures(constraint: OutputConstraint | undefined): NodeFeature[] {
  if (constraint === undefined) return [];
  if (constraint.type !== "tools") return [`output:${constraint.type}`];
  return constraint.choice === "auto" ? ["output:tools", "output:tools-auto"] : ["output:tools"];
}

/**
 * Streams the answer hop, forwarding each delta. A node that is gone, full, hung or broken is replaced by another
 * (same turn id). Before any text reached the client the new node simply starts over; once text has streamed it
 * continues the answer instead: its prompt is the answer prompt plus the text streamed so far (the prompt ends
 * inside the assistant turn, so the model goes on from there), its token budget what is left of the answer's, and
 * only its new text goes on to the client, which sees one uninterrupted answer. Each takeover is recorded.
 * A specialist's `answerPrefix` (free text only) ends every node's prompt and is the answer's first delta, sent
 * once the first node starts; the answer text starts with it, and the counts of streamed text leave it out.
 */
export async function runAnswerHop(deps: HopDeps, q: AnswerQuestion): Promise<TimelineEventOf<"answer">> {
  const specialist = deps.harness.specialists[q.label];
  if (!specialist) throw new Error(`the harness has no specialist "${q.label}"`);
  const { progress } = q;
  const started = deps.now();
  const sampling = { ...specialist.sampling, ...q.sampling };
  const prefix = q.constraint === undefined ? (specialist.answerPrefix ?? "") : "";
  let prefixSent = prefix === "";
  /** The answer text so far, across nodes, and the deltas it came in (a token each, near enough). */
  let streamed = "";
  let streamedDeltas = 0;
  let lastNode: string | undefined;
  let callStarted = false;
  const takeovers: AnswerTakeover[] = [];
  let firstTokenAt: number | undefined;
  const { value, placement } = await placeHop(
    {
      placement: deps.placement,
      hop: "answer",
      adapter: specialist.adapter,
      conversationId: q.placementKey ?? q.conversationId,
      lastNodeId: q.lastNodeId,
      promptTokens: estimatePromptTokens(q.prompt),
      requires: requiredFeatures(q.constraint),
      canRetry: (error) => {
        // The answer's own time budget spans every node: one that ran out of it is not continued elsewhere.
        if (q.signal.aborted || deps.now() - started >= specialist.answerTimeoutMs) return false;
        // A function call that began reaching the client, or constrained output (JSON, tools) with text out
        // already, cannot be continued: the grammar would have to resume mid-way. Before any output, start over.
        if (progress.streamedChars > 0 && (callStarted || q.constraint !== undefined)) return false;
        if (streamed !== "" && lastNode) {
          const { code } = toWireErrorPayload(error);
          takeovers.push({ fromNode: lastNode, toNode: "", atChar: streamed.length, code });
        }
        return true;
      },
    },
    async (subject, attempt, node) => {
      let start: StartPart | undefined;
      progress.nodeStarted = false;
      const continuation = stripSpecialSentinels(streamed);
      const parts = deps.hops.answer(
        {
          version: WIRE_VERSION,
          type: "answer",
          requestId: `${q.turnId}.answer.${attempt}`,
          conversationId: q.conversationId,
          turnId: q.turnId,
          ...tenantOf(q, node),
          adapter: specialist.adapter,
          view: q.prompt + prefix + continuation,
          sampling: {
            ...sampling,
            maxTokens: Math.max(1, (sampling.maxTokens ?? DEFAULT_ANSWER_MAX_TOKENS) - streamedDeltas),
          },
          timeoutMs: Math.max(1, Math.round(specialist.answerTimeoutMs - (deps.now() - started))),
          ...(q.constraint === undefined ? {} : { constraint: q.constraint }),
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
          lastNode = part.nodeId;
          progress.nodeStarted = true;
          const takeover = takeovers.at(-1);
          if (takeover?.toNode === "") takeover.toNode = part.nodeId;
          if (!prefixSent) q.onDelta(prefix);
          prefixSent = true;
        } else if (part.type === "text-delta") {
          firstTokenAt ??= deps.now();
          streamed += part.delta;
          streamedDeltas += 1;
          progress.streamedChars += part.delta.length;
          q.onDelta(part.delta);
        } else if (
          q.constraint?.type !== "tools" &&
          (part.type === "tool-call-delta" || part.finishReason === "tool_calls")
        ) {
          // This hop asks for no tools, so a node that sends a call is broken.
          throw new ProtocolError("answer stream carried a function call that was not asked for");
        } else if (part.type === "tool-call-delta") {
          firstTokenAt ??= deps.now();
          callStarted = true;
          // Counted as streamed: once a call started reaching the client, another node may not redo it.
          progress.streamedChars += part.argumentsDelta.length + 1;
          const { index, id, name, argumentsDelta } = part;
          q.onToolCallDelta?.({ index, id, name, argumentsDelta });
        } else {
          if (part.finishReason === "tool_calls" && part.toolCalls === undefined)
            throw new ProtocolError("a tool_calls finish carried no calls");
          return { part, start };
        }
      }
      throw new ProtocolError("answer stream ended without a finish part");
    },
    // The node that answered last holds the prompt it was sent and what it generated: after a takeover the text
    // streamed before it too, since it was sent that as a continuation.
    (answered) =>
      estimatePromptTokens(q.prompt + prefix + (takeovers.length > 0 ? streamed : answered.part.text)),
  );
  const ended = deps.now();
  // A continuing node's own text is only what it added; the answer is everything the client was sent.
  const text = prefix + (takeovers.length > 0 ? streamed : value.part.text);
  return {
    type: "answer",
    turnId: q.turnId,
    adapter: specialist.adapter,
    revision: value.start?.revision ?? "unknown",
    text: value.part.toolCalls ? renderToolCallText(value.part.toolCalls) : text,
    finishReason: value.part.finishReason,
    ...(value.part.toolCalls ? { toolCalls: value.part.toolCalls } : {}),
    hop: {
      nodeId: value.start?.nodeId ?? "unknown",
      usage: value.part.usage,
      nodeTimings: value.part.timings,
      edgeTimings: { totalMs: ended - started, firstTokenMs: (firstTokenAt ?? ended) - started },
      placement,
    },
    ...(takeovers.length > 0 ? { takeovers: takeovers.filter((t) => t.toNode !== "") } : {}),
  };
}

/**
 * The summary hop: what other specialists will see of this turn. Its prompt is read lazily (it may not fit the
 * adapter's budget); any failure becomes a `summary_failed` event, never retried here.
 */
export async function summarizeTurn(
  deps: HopDeps,
  q: Omit<HopTarget, "prompt"> & {
    label: string;
    prompt: () => string;
    /** Settles when the hop may go out (the previous summary of its adapter has, see SummarySchedule). */
    turn?: Promise<void> | undefined;
  },
): Promise<TimelineEventOf<"summary"> | TimelineEventOf<"summary_failed"> | undefined> {
  const specialist = deps.harness.specialists[q.label];
  if (!specialist) return undefined;
  try {
    const view = q.prompt();
    await q.turn;
    const started = deps.now();
    const { value: result, placement } = await placeHop(
      {
        placement: deps.placement,
        hop: "summary",
        adapter: specialist.adapter,
        conversationId: q.placementKey ?? q.conversationId,
        lastNodeId: q.lastNodeId,
        promptTokens: estimatePromptTokens(view),
        canRetry: () => true,
      },
      (subject, attempt, node) =>
        deps.hops.summary(
          {
            version: WIRE_VERSION,
            type: "summary",
            requestId: `${q.turnId}.summary.${attempt}`,
            conversationId: q.conversationId,
            turnId: q.turnId,
            ...tenantOf(q, node),
            adapter: specialist.adapter,
            view,
            maxTokens: specialist.summary.maxTokens,
            timeoutMs: specialist.summary.timeoutMs,
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
