import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { ProtocolError, WIRE_VERSION, type Sampling, type StartPart } from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../gpu/hop-client.ts";

export interface AnswerQuestion {
  hops: HopClient;
  harness: HarnessDocument;
  now: () => number;
  conversationId: string;
  turnId: string;
  label: string;
  /** The specialist's prompt (its view plus the assistant cue). */
  prompt: string;
  sampling?: Partial<Sampling>;
  signal: AbortSignal;
  onDelta: (delta: string) => void;
}

/** Streams the answer hop, forwarding each delta; resolves with the answer event, or throws a typed error. */
export async function runAnswerHop(q: AnswerQuestion): Promise<TimelineEventOf<"answer">> {
  const specialist = q.harness.specialists[q.label];
  if (!specialist) throw new Error(`the harness has no specialist "${q.label}"`);
  const started = q.now();
  let firstTokenAt: number | undefined;
  let start: StartPart | undefined;
  const parts = q.hops.answer(
    {
      version: WIRE_VERSION,
      type: "answer",
      requestId: `${q.turnId}.answer`,
      conversationId: q.conversationId,
      turnId: q.turnId,
      adapter: specialist.adapter,
      view: q.prompt,
      sampling: { ...specialist.sampling, ...q.sampling },
      timeoutMs: specialist.answerTimeoutMs,
    },
    { signal: q.signal },
  );
  for await (const part of parts) {
    if (part.type === "start") start = part;
    else if (part.type === "text-delta") {
      firstTokenAt ??= q.now();
      q.onDelta(part.delta);
    } else {
      const ended = q.now();
      return {
        type: "answer",
        turnId: q.turnId,
        adapter: specialist.adapter,
        revision: start?.revision ?? "unknown",
        text: part.text,
        finishReason: part.finishReason,
        hop: {
          nodeId: start?.nodeId ?? "unknown",
          usage: part.usage,
          nodeTimings: part.timings,
          edgeTimings: { totalMs: ended - started, firstTokenMs: (firstTokenAt ?? ended) - started },
        },
      };
    }
  }
  throw new ProtocolError("answer stream ended without a finish part");
}
