import type { NatsConnection } from "@nats-io/nats-core";
import {
  WIRE_VERSION,
  type AnswerRequestInput,
  type FinishPart,
  type ToolCallDeltaPart,
} from "../../schema/wire/v2/index.ts";
import { streamAnswer } from "../../workers/src/nats/answer-stream.ts";
import type { HopCallOptions } from "../../workers/src/nats/hop-client.ts";

export interface CollectedAnswer {
  deltas: string[];
  /** Function-call argument deltas, in order (answers under a `tools` constraint). */
  toolDeltas: ToolCallDeltaPart[];
  text: string;
  finish: FinishPart;
  revision: string;
  nodeId: string;
}

let counter = 0;

/** Builds an answer request with test defaults (greedy, short). */
export function answerInput(
  conversationId: string,
  adapter: string,
  view: string,
  overrides: Partial<AnswerRequestInput> = {},
): AnswerRequestInput {
  return {
    version: WIRE_VERSION,
    type: "answer",
    requestId: `answer-${process.pid}-${++counter}`,
    conversationId,
    adapter,
    view,
    timeoutMs: 30_000,
    sampling: { maxTokens: 24, temperature: 0 },
    ...overrides,
  };
}

/** Streams an answer to its end and checks the deltas add up to the finish part's text. */
export async function collectAnswer(
  nc: NatsConnection,
  input: AnswerRequestInput,
  options: HopCallOptions = {},
): Promise<CollectedAnswer> {
  const deltas: string[] = [];
  const toolDeltas: ToolCallDeltaPart[] = [];
  let finish: FinishPart | undefined;
  let revision = "";
  let nodeId = "";
  for await (const part of streamAnswer(nc, input, options)) {
    if (part.type === "start") {
      revision = part.revision;
      nodeId = part.nodeId;
    } else if (part.type === "text-delta") deltas.push(part.delta);
    else if (part.type === "tool-call-delta") toolDeltas.push(part);
    else finish = part;
  }
  if (!finish) throw new Error("stream ended without finish");
  return { deltas, toolDeltas, text: deltas.join(""), finish, revision, nodeId };
}
