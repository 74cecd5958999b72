import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { ProtocolError, WIRE_VERSION, type Sampling, type StartPart } from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../gpu/hop-client.ts";
import { placeHop, type HopPlacement } from "./place-hop.ts";
import type { HopTimeouts } from "./turn-context.ts";

export interface AnswerQuestion {
  hops: HopClient;
  placement: HopPlacement;
  hopTimeouts: HopTimeouts;
  harness: HarnessDocument;
  now: () => number;
  conversationId: string;
  turnId: string;
  label: string;
  /** The specialist's prompt (its view plus the assistant cue). */
  prompt: string;
  sampling?: Partial<Sampling>;
  /** The node that last ran this specialist for the conversation (its KV is warm there). */
  lastNodeId?: string;
  signal: AbortSignal;
  onDelta: (delta: string) => void;
}

/**
 * Streams the answer hop, forwarding each delta. Before any text reached the client, a node that is gone, full,
 * hung or broken is replaced by another (same turn id). Once text has streamed, a lost node fails the turn
 * cleanly instead: a second node would write a different answer, and the client has already shown the first.
 */
export async function runAnswerHop(q: AnswerQuestion): Promise<TimelineEventOf<"answer">> {
  const specialist = q.harness.specialists[q.label];
  if (!specialist) throw new Error(`the harness has no specialist "${q.label}"`);
  const started = q.now();
  let streamed = 0;
  const { value, placement } = await placeHop(
    {
      placement: q.placement,
      hop: "answer",
      adapter: specialist.adapter,
      conversationId: q.conversationId,
      lastNodeId: q.lastNodeId,
      canRetry: () => streamed === 0 && !q.signal.aborted,
    },
    async (subject, attempt) => {
      let firstTokenAt: number | undefined;
      let start: StartPart | undefined;
      const parts = q.hops.answer(
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
          firstPartTimeoutMs: q.hopTimeouts.firstPartMs,
          stallTimeoutMs: q.hopTimeouts.stallMs,
        },
      );
      for await (const part of parts) {
        if (part.type === "start") start = part;
        else if (part.type === "text-delta") {
          firstTokenAt ??= q.now();
          streamed += part.delta.length;
          q.onDelta(part.delta);
        } else return { part, start, firstTokenAt };
      }
      throw new ProtocolError("answer stream ended without a finish part");
    },
  );
  const ended = q.now();
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
