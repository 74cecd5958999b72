import { placeOverFleet } from "../../workers/src/fleet/hop-placement.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { StoredTimelineEvent, TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import {
  CancelledError,
  WIRE_VERSION,
  type GenerateRequestInput,
  type GenerateResult,
  type Usage,
} from "../../schema/wire/v2/index.ts";
import type { GenerateClient, GenerateStreamPart } from "../../workers/src/nats/generate-client.ts";
import type { HopCallOptions } from "../../workers/src/nats/hop-transport.ts";
import type { TurnCharge, UsageMeter } from "../../workers/src/conversation/charge-turn.ts";
import type {
  ConversationMeta,
  ConversationStore,
  IdempotencyRecord,
  ViewSnapshot,
} from "../../workers/src/conversation/conversation-store.ts";
import type { TurnLoopDeps, TurnOutbox } from "../../workers/src/turns/turn-loop.ts";
import type { TurnRecord, TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import { readPartStream } from "../../workers/src/lib/create-part-stream.ts";

export const TIMINGS = { queueMs: 0, prefillMs: 1, decodeMs: 2, totalMs: 3 };

export function usage(promptTokens: number, completionTokens: number): Usage {
  return { promptTokens, cachedPromptTokens: 0, evaluatedPromptTokens: promptTokens, completionTokens };
}

/** The conversation store in memory, with the Durable Object store's semantics (seq from 1, atomic appends). */
export class MemoryConversationStore implements ConversationStore {
  meta: ConversationMeta | undefined;
  readonly events: StoredTimelineEvent[] = [];
  readonly idempotency = new Map<string, IdempotencyRecord>();
  snapshot: ViewSnapshot | undefined;

  constructor(meta?: ConversationMeta) {
    this.meta = meta;
  }

  readMeta = () => this.meta;
  createMeta = (meta: ConversationMeta) => void (this.meta = meta);
  updateMetadata = (metadata: Record<string, string>) =>
    void (this.meta = this.meta && { ...this.meta, metadata });
  append(events: readonly TimelineEvent[]): StoredTimelineEvent[] {
    const stored = events.map((e, i): StoredTimelineEvent => ({
      ...e,
      seq: this.lastSeq() + i + 1,
      createdAt: 1,
    }));
    this.events.push(...stored);
    return stored;
  }
  readTurn = (turnId: string) => this.events.filter((e) => e.turnId === turnId);
  readEventsAfter = (afterSeq: number, limit: number) =>
    this.events.filter((e) => e.seq > afterSeq).slice(0, limit);
  listEvents(options: Parameters<ConversationStore["listEvents"]>[0]): StoredTimelineEvent[] {
    const { types, order, afterSeq, limit } = options;
    const sorted = this.events.filter((e) => types.includes(e.type));
    if (order === "desc") sorted.reverse();
    const after =
      afterSeq === undefined
        ? sorted
        : sorted.filter((e) => (order === "asc" ? e.seq > afterSeq : e.seq < afterSeq));
    return after.slice(0, limit);
  }
  lastSeq = () => this.events.at(-1)?.seq ?? 0;
  readViewSnapshot = () => this.snapshot;
  writeViewSnapshot = (snapshot: ViewSnapshot) => void (this.snapshot = snapshot);
  readIdempotency = (key: string) => this.idempotency.get(key);
  writeIdempotency = (record: IdempotencyRecord) => void this.idempotency.set(record.key, record);
  deleteAll(): Promise<void> {
    this.meta = undefined;
    this.events.length = 0;
    return Promise.resolve();
  }
}

type RouteScript = (
  input: GenerateRequestInput,
) => Promise<{ label: string; usage?: Usage; confidence?: number }>;
type AnswerScript = (
  input: GenerateRequestInput,
  options: HopCallOptions,
) => AsyncIterable<GenerateStreamPart>;
type SummaryScript = (input: GenerateRequestInput) => Promise<{ text: string; usage?: Usage }>;

const defaultRoute: RouteScript = () => Promise.resolve({ label: "coding" });
const defaultSummary: SummaryScript = () => Promise.resolve({ text: "Said hello." });

/**
 * A generate client that plays scripted replies and records every request, by the edge's use of it: the route's
 * choice, the streamed answer, the summary.
 */
export function createScriptedHops(script: {
  route?: RouteScript;
  answer?: AnswerScript;
  summary?: SummaryScript;
}) {
  const calls = {
    route: [] as GenerateRequestInput[],
    answer: [] as GenerateRequestInput[],
    summary: [] as GenerateRequestInput[],
  };
  const result = (input: GenerateRequestInput, nodeId: string) => ({
    version: WIRE_VERSION,
    type: "result" as const,
    requestId: input.requestId,
    nodeId,
    adapter: input.adapter,
    revision: "rev1",
    finishReason: "stop" as const,
    timings: TIMINGS,
  });
  const hops: GenerateClient = {
    async generate(input) {
      if (input.priority === "route") {
        calls.route.push(input);
        const reply = await (script.route ?? defaultRoute)(input);
        return {
          ...result(input, "node-route"),
          text: reply.label,
          choice: {
            value: reply.label,
            ...(reply.confidence === undefined ? {} : { probabilities: { [reply.label]: reply.confidence } }),
          },
          usage: reply.usage ?? usage(20, 2),
        } satisfies GenerateResult;
      }
      calls.summary.push(input);
      const reply = await (script.summary ?? defaultSummary)(input);
      return {
        ...result(input, "node-summary"),
        text: reply.text,
        usage: reply.usage ?? usage(110, 4),
      } satisfies GenerateResult;
    },
    stream(input, options) {
      calls.answer.push(input);
      return (script.answer ?? (() => answerParts("Hello there.", usage(100, 5))))(input, options ?? {});
    },
  };
  return { hops, calls };
}

/** A whole answer: `start`, one delta per word, `finish` with the node's usage. */
// eslint-disable-next-line @typescript-eslint/require-await -- an async stream like the wire's, with nothing to wait for
export async function* answerParts(text: string, reported: Usage): AsyncGenerator<GenerateStreamPart> {
  let seq = 0;
  yield {
    version: WIRE_VERSION,
    seq: seq++,
    type: "start",
    requestId: "r",
    nodeId: "node-answer",
    adapter: "a",
    revision: "rev1",
  };
  for (const delta of text.split(/(?<= )/))
    yield { version: WIRE_VERSION, seq: seq++, type: "text-delta", delta };
  yield {
    version: WIRE_VERSION,
    seq,
    type: "finish",
    finishReason: "stop",
    text,
    usage: reported,
    timings: TIMINGS,
  };
}

/** Streams `text`, then hangs until the caller aborts (and fails the way the NATS hop does: a cancelled error). */
export async function* answerUntilAborted(
  text: string,
  options: HopCallOptions,
): AsyncGenerator<GenerateStreamPart> {
  yield {
    version: WIRE_VERSION,
    seq: 0,
    type: "start",
    requestId: "r",
    nodeId: "node-answer",
    adapter: "a",
    revision: "rev1",
  };
  yield { version: WIRE_VERSION, seq: 1, type: "text-delta", delta: text };
  await new Promise<never>((_, reject) => {
    const fail = () => reject(new CancelledError("the client went away"));
    if (options.signal?.aborted) fail();
    options.signal?.addEventListener("abort", fail, { once: true });
  });
}

export interface Recorded {
  charges: Array<{ tenantId: string; charge: TurnCharge }>;
  events: Array<{ phase: "turn" | "summary"; turn: TurnRecord }>;
}

/** Loop dependencies with fakes everywhere: no fleet (queue-group placement), a fixed clock, counted turn ids. */
export function createTestDeps(hops: GenerateClient, overrides: Partial<TurnLoopDeps> = {}) {
  const recorded: Recorded = { charges: [], events: [] };
  let nextTurn = 0;
  const meter: UsageMeter = {
    record(tenantId, charge) {
      recorded.charges.push({ tenantId, charge });
      return Promise.resolve();
    },
  };
  const outbox: TurnOutbox = {
    emit(_meta, turn, phase) {
      recorded.events.push({ phase, turn });
      return Promise.resolve();
    },
  };
  const deps: TurnLoopDeps = {
    client: hops,
    placement: placeOverFleet({ nodes: () => Promise.resolve([]) }),
    hopTimeouts: { firstPartMs: 1_000, stallMs: 1_000, replyMs: 1_000 },
    harness: DEFAULT_HARNESS,
    harnessHash: "hash-1",
    now: () => 1_700_000_000_000,
    newTurnId: () => `turn_t${++nextTurn}`,
    meter,
    ...overrides,
  };
  return { deps, outbox, recorded };
}

export const META: ConversationMeta = { id: "conv_1", tenantId: "tenant_a", createdAt: 1, metadata: {} };

export async function collectParts(stream: ReadableStream<Uint8Array>): Promise<TurnStreamPart[]> {
  const parts: TurnStreamPart[] = [];
  for await (const part of readPartStream<TurnStreamPart>(stream)) parts.push(part);
  return parts;
}
