/**
 * Test-side builders of the edge's three kinds of `generate` request (route, answer, summary), with test defaults
 * (greedy, short), and readers of their replies. The edge builds the same requests in workers/src/generate/.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import {
  SPECIALIST_LABELS,
  ROUTER_ADAPTER,
  WIRE_VERSION,
  type FinishPart,
  type GenerateRequestInput,
  type GenerateResult,
  type ToolCallDeltaPart,
} from "../../schema/wire/v2/index.ts";
import { requestGenerate, type HopCallOptions } from "../../workers/src/nats/generate-client.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";

let counter = 0;
const nextId = (kind: string) => `${kind}-${process.pid}-${++counter}`;

export interface RouteInput {
  requestId?: string;
  slotKey?: string;
  tenantId?: string;
  turnId?: string;
  adapter?: string;
  prompt: string;
  choices?: readonly string[];
  afterChoice?: string;
  reasoningMaxTokens?: number;
  maxTokens?: number;
  timeoutMs?: number;
}

/** A route-shaped request: the router's choice among the labels, greedy, with every choice's probability. */
export function routeRequest(input: RouteInput): GenerateRequestInput {
  return {
    version: WIRE_VERSION,
    type: "generate",
    requestId: input.requestId ?? nextId("route"),
    ...(input.turnId === undefined ? {} : { turnId: input.turnId }),
    ...(input.tenantId === undefined ? {} : { tenantId: input.tenantId }),
    adapter: input.adapter ?? ROUTER_ADAPTER,
    prompt: input.prompt,
    slotKey: input.slotKey ?? "route-test",
    priority: "route",
    constraint: {
      type: "choice",
      choices: [...(input.choices ?? SPECIALIST_LABELS)],
      reasoningMaxTokens: input.reasoningMaxTokens ?? 0,
      ...(input.afterChoice === undefined ? {} : { afterChoice: input.afterChoice }),
    },
    sampling: { maxTokens: input.maxTokens ?? 24, temperature: 0, topP: 1, topK: 1 },
    return: { choiceProbabilities: true },
    timeoutMs: input.timeoutMs ?? 30_000,
  };
}

export interface RouteReply {
  label: string;
  confidence: number | undefined;
  rawText: string;
  result: GenerateResult;
}

/** Sends a route-shaped request and reads its choice. */
export async function requestRoute(
  nc: NatsConnection,
  input: RouteInput,
  options: HopCallOptions = {},
): Promise<RouteReply & Pick<GenerateResult, "usage" | "timings" | "nodeId">> {
  const result = await requestGenerate(nc, routeRequest(input), options);
  const label = result.choice?.value ?? "";
  return {
    label,
    confidence: result.choice?.probabilities?.[label],
    rawText: result.text,
    result,
    usage: result.usage,
    timings: result.timings,
    nodeId: result.nodeId,
  };
}

/** A summary-shaped request: greedy, unstreamed, in the background class. */
export function summaryRequest(
  slotKey: string,
  adapter: string,
  prompt: string,
  overrides: Partial<GenerateRequestInput> = {},
): GenerateRequestInput {
  return {
    version: WIRE_VERSION,
    type: "generate",
    requestId: nextId("summary"),
    adapter,
    prompt,
    slotKey,
    priority: "summary",
    sampling: { maxTokens: 192, temperature: 0, topP: 1, topK: 1 },
    timeoutMs: 30_000,
    ...overrides,
  };
}

/** An answer-shaped request with test defaults (greedy, short, streamed). */
export function answerInput(
  slotKey: string,
  adapter: string,
  prompt: string,
  overrides: Partial<GenerateRequestInput> = {},
): GenerateRequestInput {
  return {
    version: WIRE_VERSION,
    type: "generate",
    requestId: nextId("answer"),
    adapter,
    prompt,
    slotKey,
    priority: "answer",
    timeoutMs: 30_000,
    sampling: { maxTokens: 24, temperature: 0 },
    return: { stream: true },
    ...overrides,
  };
}

export interface CollectedAnswer {
  deltas: string[];
  /** Function-call argument deltas, in order (answers under a `tools` constraint). */
  toolDeltas: ToolCallDeltaPart[];
  text: string;
  finish: FinishPart;
  revision: string;
  /** The versioned name of the adapter revision that answered. */
  adapter: string;
  nodeId: string;
}

/** Streams an answer to its end and checks the deltas add up to the finish part's text. */
export async function collectAnswer(
  nc: NatsConnection,
  input: GenerateRequestInput,
  options: HopCallOptions = {},
): Promise<CollectedAnswer> {
  const deltas: string[] = [];
  const toolDeltas: ToolCallDeltaPart[] = [];
  let finish: FinishPart | undefined;
  let revision = "";
  let adapter = "";
  let nodeId = "";
  for await (const part of streamGenerate(nc, input, options)) {
    if (part.type === "start") {
      revision = part.revision;
      adapter = part.adapter;
      nodeId = part.nodeId;
    } else if (part.type === "text-delta") deltas.push(part.delta);
    else if (part.type === "tool-call-delta") toolDeltas.push(part);
    else finish = part;
  }
  if (!finish) throw new Error("stream ended without finish");
  return { deltas, toolDeltas, text: deltas.join(""), finish, revision, adapter, nodeId };
}
