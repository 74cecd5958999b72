import type { NatsConnection } from "@nats-io/nats-core";
import type { GenerateRequestInput } from "../../schema/wire/v2/index.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";
import type { CollectedAnswer } from "../harness/generate-requests.ts";

export interface TimedAnswer extends CollectedAnswer {
  /** Requester side: request sent → first text delta received (the answer's time to first token). */
  firstDeltaMs: number;
  /** Requester side: first text delta → finish received, the span the decode rate is measured over. */
  streamMs: number;
}

/** An answer hop streamed to its end as the edge sees it, with the requester-side timings. */
export async function collectTimedAnswer(
  nc: NatsConnection,
  input: GenerateRequestInput,
): Promise<TimedAnswer> {
  const deltas: string[] = [];
  let revision = "";
  let adapter = "";
  let nodeId = "";
  const started = performance.now();
  let firstDeltaAt: number | undefined;
  for await (const part of streamGenerate(nc, input)) {
    if (part.type === "start") {
      revision = part.revision;
      adapter = part.adapter;
      nodeId = part.nodeId;
    } else if (part.type === "text-delta") {
      firstDeltaAt ??= performance.now();
      deltas.push(part.delta);
    } else if (part.type === "finish") {
      const ended = performance.now();
      const first = firstDeltaAt ?? ended;
      return {
        deltas,
        // The bench decodes plain text: no tools constraint, so no argument deltas.
        toolDeltas: [],
        text: deltas.join(""),
        finish: part,
        revision,
        adapter,
        nodeId,
        firstDeltaMs: first - started,
        streamMs: ended - first,
      };
    }
  }
  throw new Error("stream ended without finish");
}
