import type { AnswerTakeover, HopFacts } from "../db/timeline-event.ts";
import { stripSpecialSentinels } from "../../../schema/harness/chat-templates.ts";
import {
  DEFAULT_ANSWER_MAX_TOKENS,
  ProtocolError,
  WIRE_VERSION,
  toWireErrorPayload,
  type AnswerFinishReason,
  type GrammarConstraint,
  type NodeFeature,
  type OutputConstraint,
  type SamplingInput,
  type StartPart,
  type ToolCall,
  type ToolCallDeltaPart,
} from "../../../schema/wire/v2/index.ts";
import { estimatePromptTokens } from "../fleet/placement-ledger.ts";
import type { GenerateDeps, GenerateTarget } from "./generate-deps.ts";
import { placeHop } from "./place-generate.ts";

/** How far a stream got: what a cancelled or failed one is charged by (the node's figures never came). */
export interface StreamProgress {
  /** The node of the last attempt sent its `start` part, so it had the prompt. */
  nodeStarted: boolean;
  /** Characters of output forwarded to the reader. */
  streamedChars: number;
}

/** What an answer is decoded under: an output constraint of the public API, or a harness's GBNF grammar. */
export type AnswerConstraint = OutputConstraint | GrammarConstraint;

export interface StreamQuestion extends GenerateTarget {
  /** What the request is for: its id's middle part and its priority class. */
  purpose: "answer";
  /** Prefilled opening of the output (free text only): it ends every node's prompt and is the first delta. */
  prefix?: string | undefined;
  sampling: SamplingInput;
  /** The whole stream's time budget, across every node that takes part. */
  timeoutMs: number;
  signal: AbortSignal;
  onDelta: (delta: string) => void;
  /** What the output is decoded under (tools, JSON, a grammar); absent: free text. */
  constraint?: AnswerConstraint | undefined;
  /** Each slice of a function call's arguments, under a `tools` constraint. */
  onToolCallDelta?: (part: Pick<ToolCallDeltaPart, "index" | "id" | "name" | "argumentsDelta">) => void;
  /** Updated as the stream runs, and still telling after it threw. */
  progress: StreamProgress;
}

export interface StreamedText {
  /** Everything the reader was sent, the prefix included. */
  text: string;
  finishReason: AnswerFinishReason;
  toolCalls?: ToolCall[];
  /** The adapter revision that generated, as the (last) node named it. */
  adapter: string;
  revision: string;
  facts: HopFacts;
  /** Mid-stream takeovers, in order; absent when one node wrote the whole output. */
  takeovers?: AnswerTakeover[];
}

/** The node features output under `constraint` needs (node-status `NODE_FEATURES`). */
export function requiredFeatures(constraint: AnswerConstraint | undefined): NodeFeature[] {
  if (constraint === undefined) return [];
  if (constraint.type !== "tools") return [`output:${constraint.type}`];
  return constraint.choice === "auto" ? ["output:tools", "output:tools-auto"] : ["output:tools"];
}

/**
 * Streams a completion, forwarding each delta. A node that is gone, full, hung or broken is replaced by another
 * (same turn id). Before any text reached the reader the new node simply starts over; once text has streamed it
 * continues the output instead: its prompt is the prompt plus the text streamed so far (the prompt ends inside the
 * assistant turn, so the model goes on from there), its token budget what is left, and only its new text goes on to
 * the reader, who sees one uninterrupted output. Each takeover is recorded. A `prefix` (free text only) ends every
 * node's prompt and is the first delta, sent once the first node starts; the text starts with it, and the counts of
 * streamed text leave it out.
 */
export async function streamText(deps: GenerateDeps, q: StreamQuestion): Promise<StreamedText> {
  const { progress } = q;
  const started = deps.now();
  const prefix = q.constraint === undefined ? (q.prefix ?? "") : "";
  let prefixSent = prefix === "";
  /** The text so far, across nodes, and the deltas it came in (a token each, near enough). */
  let streamed = "";
  let streamedDeltas = 0;
  let lastNode: string | undefined;
  let callStarted = false;
  const takeovers: AnswerTakeover[] = [];
  let firstTokenAt: number | undefined;
  const { value, placement } = await placeHop(
    {
      placement: deps.placement,
      hop: q.purpose,
      adapter: q.adapter,
      conversationId: q.placementKey ?? q.slotKey,
      lastNodeId: q.lastNodeId,
      promptTokens: estimatePromptTokens(q.prompt),
      requires: requiredFeatures(q.constraint),
      canRetry: (error) => {
        // The time budget spans every node: one that ran out of it is not continued elsewhere.
        if (q.signal.aborted || deps.now() - started >= q.timeoutMs) return false;
        // A function call that began reaching the reader, or constrained output (JSON, tools) with text out
        // already, cannot be continued: the grammar would have to resume mid-way. Before any output, start over.
        if (progress.streamedChars > 0 && (callStarted || q.constraint !== undefined)) return false;
        if (streamed !== "" && lastNode) {
          const { code } = toWireErrorPayload(error);
          takeovers.push({ fromNode: lastNode, toNode: "", atChar: streamed.length, code });
        }
        return true;
      },
    },
    async (nodeId, attempt) => {
      let start: StartPart | undefined;
      progress.nodeStarted = false;
      const continuation = stripSpecialSentinels(streamed);
      const parts = deps.client.stream(
        {
          version: WIRE_VERSION,
          type: "generate",
          requestId: `${q.turnId}.${q.purpose}.${attempt}`,
          turnId: q.turnId,
          ...(q.tenantId === undefined ? {} : { tenantId: q.tenantId }),
          adapter: q.adapter,
          prompt: q.prompt + prefix + continuation,
          slotKey: q.slotKey,
          priority: q.purpose,
          sampling: {
            ...q.sampling,
            maxTokens: Math.max(1, (q.sampling.maxTokens ?? DEFAULT_ANSWER_MAX_TOKENS) - streamedDeltas),
          },
          timeoutMs: Math.max(1, Math.round(q.timeoutMs - (deps.now() - started))),
          ...(q.constraint === undefined ? {} : { constraint: q.constraint }),
        },
        {
          nodeId,
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
          // This request asks for no tools, so a node that sends a call is broken.
          throw new ProtocolError("stream carried a function call that was not asked for");
        } else if (part.type === "tool-call-delta") {
          firstTokenAt ??= deps.now();
          callStarted = true;
          // Counted as streamed: once a call started reaching the reader, another node may not redo it.
          progress.streamedChars += part.argumentsDelta.length + 1;
          const { index, id, name, argumentsDelta } = part;
          q.onToolCallDelta?.({ index, id, name, argumentsDelta });
        } else {
          if (part.finishReason === "tool_calls" && part.toolCalls === undefined)
            throw new ProtocolError("a tool_calls finish carried no calls");
          return { part, start };
        }
      }
      throw new ProtocolError("stream ended without a finish part");
    },
    // The node that answered last holds the prompt it was sent and what it generated: after a takeover the text
    // streamed before it too, since it was sent that as a continuation.
    (answered) =>
      estimatePromptTokens(q.prompt + prefix + (takeovers.length > 0 ? streamed : answered.part.text)),
  );
  const ended = deps.now();
  const { part, start } = value;
  return {
    // A continuing node's own text is only what it added; the output is everything the reader was sent.
    text: prefix + (takeovers.length > 0 ? streamed : part.text),
    finishReason: part.finishReason,
    ...(part.toolCalls ? { toolCalls: part.toolCalls } : {}),
    adapter: start?.adapter ?? q.adapter,
    revision: start?.revision ?? "unknown",
    facts: {
      nodeId: start?.nodeId ?? "unknown",
      usage: part.usage,
      nodeTimings: part.timings,
      edgeTimings: { totalMs: ended - started, firstTokenMs: (firstTokenAt ?? ended) - started },
      placement,
    },
    ...(takeovers.length > 0 ? { takeovers: takeovers.filter((t) => t.toNode !== "") } : {}),
  };
}
