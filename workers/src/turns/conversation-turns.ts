import { MAX_HARNESS_CHANGED_PATHS, type TimelineEvent, type TimelineEventOf } from "../db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { diffJson, type JsonValue } from "../harness-registry/diff-json.ts";
import { replayTurnParts } from "../conversation/replay-turn-parts.ts";
import { createPartStream } from "../lib/create-part-stream.ts";
import { PartBroadcast } from "../lib/part-broadcast.ts";
import { TurnQueue } from "../lib/turn-queue.ts";
import { buildTurnRecord } from "../conversation/build-turn-record.ts";
import { ConversationTimeline, hasToolCall } from "../conversation/conversation-timeline.ts";
import {
  HARNESS_PIN_KEY,
  type StartTurnRequest,
  type StartTurnResult,
  type StoredTurn,
  type TurnRefusal,
} from "../conversation/conversation-rpc.ts";
import type { ConversationStore } from "../conversation/conversation-store.ts";
import { SummarySchedule } from "../conversation/summary-schedule.ts";
import { readItem, readLatestTurnId, readStoredTurn, readTombstones } from "../conversation/stored-turns.ts";
import {
  CANCELLED_BY_DISCONNECT,
  CANCELLED_BY_REQUEST,
  resolveTurnDeps,
  runTurnLoop,
  type TurnClient,
  type TurnLoopDeps,
  type TurnOutbox,
} from "./turn-loop.ts";
import type { TurnStreamPart } from "../conversation/turn-record.ts";
import { StageClock } from "../lib/stage-timings.ts";

/** Finished turns whose parts stay in memory for stream resume, besides the running one. */
const KEPT_BROADCASTS = 8;

/**
 * The stored turns of one conversation: idempotency, one turn at a time, each through {@link runTurnLoop}; the
 * running turns' cancel switches and the live parts that late readers attach to.
 */
export class ConversationTurns {
  readonly #deps: TurnLoopDeps & { store: ConversationStore; outbox: TurnOutbox };
  readonly #queue = new TurnQueue();
  readonly #summaries = new SummarySchedule();
  /** Turns whose loop has not returned: past the queue, their background steps and charging may still run. */
  readonly #finishing = new Set<Promise<void>>();
  /** Each running turn's loop by turn id (see {@link ConversationTurns.finished}). */
  readonly #loops = new Map<string, Promise<void>>();
  readonly #cancels = new Map<string, AbortController>();
  /** Settles when the turn's answer is decided (its client stream has ended); summary and charge may follow. */
  readonly #answered = new Map<string, Promise<void>>();
  readonly #broadcasts = new Map<string, PartBroadcast<TurnStreamPart>>();
  /** Started turns as they will read once their user line is stored (it waits for the route, see turn-loop.ts). */
  readonly #pending = new Map<string, StoredTurn>();
  /** The latest turn including queued ones (the timeline only has it once its turn runs). */
  #claimedLatest: string | undefined;
  /**
   * The timeline and its views kept from turn to turn: building them anew each turn read the stored views and the
   * latest events again (about 2 ms of the object's CPU a turn in `bench:edge`).
   */
  #timeline: ConversationTimeline | undefined;

  constructor(deps: TurnLoopDeps & { store: ConversationStore; outbox: TurnOutbox }) {
    this.#deps = deps;
  }

  /**
   * Starts a turn, or refuses it: 404 without the conversation, an unknown or deleted `previousTurnId` or an
   * unknown item reference; 409 `previous_response_not_latest` when `previousTurnId` is not the latest turn (the
   * caller forks); with an Idempotency-Key already seen, 422 for another body, 409 while that turn runs, else a
   * replay of the finished turn (which runs no hop and costs nothing), except a turn cancelled because its
   * client went away: that one runs anew. The key is taken before anything awaits, so two requests with one key
   * cannot both start a turn.
   */
  startTurn(request: StartTurnRequest, turnId?: string, clock?: StageClock): StartTurnResult {
    const stages = clock ?? new StageClock(this.#deps.now);
    const startedAt = this.#deps.now();
    const { store } = this.#deps;
    const meta = store.readMeta();
    if (!meta)
      return refuse(404, "conversation_not_found", `conversation ${request.conversationId} not found`);
    const id = turnId ?? this.#deps.newTurnId(meta.id);
    if (request.idempotency) {
      const seen = store.readIdempotency(request.idempotency.key);
      if (seen && seen.requestHash !== request.idempotency.requestHash) {
        return refuse(
          422,
          "idempotency_key_reused",
          "this Idempotency-Key was used with a different request body",
        );
      }
      const events = seen ? store.readTurn(seen.turnId) : [];
      const turn = events.length > 0 ? buildTurnRecord(meta.id, events) : undefined;
      const dropped = events.some((e) => e.type === "turn_cancelled" && e.reason === CANCELLED_BY_DISCONNECT);
      if (seen && !dropped) {
        if (!turn || turn.status === "in_progress") {
          return refuse(
            409,
            "idempotency_key_in_flight",
            "a request with this Idempotency-Key is still running",
          );
        }
        return { ok: true, stream: streamParts(replayTurnParts(turn)) };
      }
    }
    // After the key's replay (a retry of a chained turn is no longer chained from the latest) and before the key
    // is taken, so a refused turn leaves nothing stored.
    const invalid = this.#checkReferences(request);
    if (invalid) return invalid;
    if (request.idempotency) store.writeIdempotency({ ...request.idempotency, turnId: id });
    this.#claimedLatest = id;
    const stream = createPartStream<TurnStreamPart>();
    const broadcast = this.#keepBroadcast(id);
    const cancel = new AbortController();
    this.#cancels.set(id, cancel);
    this.#pending.set(id, pendingTurn(meta.id, id, request, this.#deps.now()));
    let answered = (): void => undefined;
    this.#answered.set(id, new Promise<void>((resolve) => (answered = resolve)));
    const client: TurnClient = {
      signal: stream.signal,
      push: (part) => {
        stream.push(part);
        broadcast.push(part);
      },
      close: () => {
        stream.close();
        broadcast.close();
        answered();
      },
    };
    const queuedAt = this.#deps.now();
    stages.add("start", queuedAt - startedAt);
    // The queue holds the turn until `release` (the answer is stored), not through its summary.
    void this.#queue.run(
      () =>
        new Promise<void>((release) => {
          void (async () => {
            try {
              stages.add("queue", this.#deps.now() - queuedAt);
              // The harness follows what the fleet serves (chat format, context); a new one rebuilds the views.
              const deps = await stages.time("harness", () =>
                resolveTurnDeps(this.#deps, {
                  tenantId: meta.tenantId,
                  conversationKey: meta.id,
                  requestPin: request.harnessPin,
                  conversationPin: meta.metadata[HARNESS_PIN_KEY],
                }),
              );
              const { harnessHash, harnessChoice } = deps;
              // The timeline kept from the last turn holds the document it ran under: the change's diff is free.
              const kept = this.#timeline?.harness;
              const timeline = stages.timeSync("viewsLoad", () =>
                this.#timelineFor(deps.harness, harnessHash),
              );
              const harnessChange = readHarnessChange(
                timeline,
                id,
                { document: deps.harness, hash: harnessHash },
                kept,
              );
              const loop = runTurnLoop(deps, {
                ...request,
                tenantId: meta.tenantId,
                conversationId: meta.id,
                turnId: id,
                harnessHash,
                harnessChoice,
                timeline,
                opening: [...harnessChange, ...readOpening(timeline, id, request)],
                outbox: { meta, outbox: this.#deps.outbox },
                client,
                cancel: cancel.signal,
                summaries: this.#summaries,
                release,
                stages,
              });
              this.#finishing.add(loop);
              this.#loops.set(id, loop);
              await loop.finally(() => {
                this.#finishing.delete(loop);
                this.#loops.delete(id);
              });
            } finally {
              this.#cancels.delete(id);
              this.#pending.delete(id);
              this.#answered.delete(id);
              client.close();
              release();
            }
          })().catch(() => undefined);
        }),
    );
    return { ok: true, stream: stream.stream };
  }

  #timelineFor(harness: TurnLoopDeps["harness"], harnessHash: string): ConversationTimeline {
    if (!this.#timeline?.serves(harnessHash))
      this.#timeline = new ConversationTimeline(this.#deps.store, harness, harnessHash);
    return this.#timeline;
  }

  /**
   * A turn nobody streams (an inbound webhook, `background: true`): its parts are drained here, so the answer
   * runs to completion; readers may attach (stream resume) and `cancel` stops it.
   */
  startDetachedTurn(
    request: StartTurnRequest,
  ): { ok: true; turnId: string } | { ok: false; refusal: TurnRefusal } {
    const meta = this.#deps.store.readMeta();
    const turnId = this.#deps.newTurnId(meta?.id ?? request.conversationId);
    const result = this.startTurn(request, turnId);
    if (!result.ok) return result;
    void result.stream.pipeTo(new WritableStream()).catch(() => undefined);
    // A replay for a key already seen is of the turn that key started.
    const key = request.idempotency?.key;
    return { ok: true, turnId: (key && this.#deps.store.readIdempotency(key)?.turnId) || turnId };
  }

  /**
   * Resolves once the turn's loop ran to its end here (its rollout outcome reported, its background steps done); at
   * once for a turn not running here. What the user's feedback waits for, so the guard has counted the turn first.
   */
  async finished(turnId: string): Promise<void> {
    await this.#loops.get(turnId)?.catch(() => undefined);
  }

  /** Resolves once the turn's answer is decided (answered, failed or cancelled); at once for one not running. */
  async settled(turnId: string): Promise<void> {
    await this.#answered.get(turnId);
  }

  /** A stored turn, or one started here whose user line is not stored yet (`in_progress`); null for neither. */
  readTurn(turnId: string): StoredTurn | null {
    const meta = this.#deps.store.readMeta();
    if (!meta) return null;
    return readStoredTurn(this.#deps.store, meta.id, turnId) ?? this.#pending.get(turnId) ?? null;
  }

  /** Aborts a running or queued turn; false when it is not running here. */
  cancel(turnId: string): boolean {
    const cancel = this.#cancels.get(turnId);
    cancel?.abort(new Error(CANCELLED_BY_REQUEST));
    return cancel !== undefined;
  }

  /**
   * Stream resume: the parts of a turn this object ran, from its first, then the live ones. After an eviction
   * only the stored turn is left: a finished one replays with its text in one delta (so its sequence numbers
   * differ from the first delivery's); undefined for an unknown or deleted response.
   */
  attach(turnId: string): StartTurnResult | undefined {
    const live = this.#broadcasts.get(turnId);
    if (live) return { ok: true, stream: streamParts(live.attach()) };
    const meta = this.#deps.store.readMeta();
    const stored = meta ? readStoredTurn(this.#deps.store, meta.id, turnId) : null;
    if (!stored || stored.deleted || stored.turn.status === "in_progress") return undefined;
    return { ok: true, stream: streamParts(replayTurnParts(stored.turn)) };
  }

  /**
   * Runs `task` once the running and queued turns are done, background steps (the summary) and charging included,
   * so no event lands after a delete.
   */
  afterTurns<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.run(async () => {
      await this.#summaries.idle();
      while (this.#finishing.size > 0) await Promise.allSettled([...this.#finishing]);
      return task();
    });
  }

  #checkReferences(request: StartTurnRequest): StartTurnResult | undefined {
    const { store } = this.#deps;
    const previous = request.previousTurnId;
    if (previous !== undefined) {
      const found = store.readTurn(previous).some((event) => event.type === "user_message");
      if (!found || readTombstones(store).responses.has(previous))
        return refuse(
          404,
          "previous_response_not_found",
          `previous response not found`,
          "previous_response_id",
        );
      if (previous !== (this.#claimedLatest ?? readLatestTurnId(store)))
        return refuse(409, "previous_response_not_latest", "the previous response is not the latest");
    }
    const meta = store.readMeta();
    for (const itemId of request.itemReferences ?? []) {
      if (!meta || !readItem(store, meta.id, itemId))
        return refuse(404, "item_not_found", `No item found with id '${itemId}'.`, "input");
    }
    const calls = request.outsideCallIds ?? [];
    if (calls.length > 0) {
      const unknown = calls.find(({ callId }) => !hasToolCall(store, callId));
      if (unknown)
        return refuse(
          400,
          "invalid_value",
          `No tool call found for function call output with call_id ${unknown.callId}.`,
          `input[${unknown.index}].call_id`,
        );
    }
    return undefined;
  }

  #keepBroadcast(turnId: string): PartBroadcast<TurnStreamPart> {
    const broadcast = new PartBroadcast<TurnStreamPart>();
    this.#broadcasts.set(turnId, broadcast);
    for (const [id, kept] of this.#broadcasts) {
      if (this.#broadcasts.size <= KEPT_BROADCASTS + 1) break;
      if (kept.closed) this.#broadcasts.delete(id);
    }
    return broadcast;
  }
}

function pendingTurn(
  conversationId: string,
  turnId: string,
  request: StartTurnRequest,
  now: number,
): StoredTurn {
  const userMessage = {
    type: "user_message",
    turnId,
    text: request.text,
    harnessHash: "",
    ...(request.response ? { response: request.response } : {}),
    ...(request.toolResults ? { toolResults: request.toolResults } : {}),
    seq: 0,
    createdAt: now,
  } as const;
  return {
    turn: buildTurnRecord(conversationId, [userMessage]),
    deleted: false,
    context: request.context ?? [],
    ...(request.instructions === undefined ? {} : { instructions: request.instructions }),
  };
}

/**
 * A `harness_changed` event when this turn runs under another harness than the conversation's latest turn did:
 * first in the turn's opening, so the timeline shows where the change took effect. `previous` is the document the
 * edge still holds from an earlier turn; the event lists what changed only when that is the previous turn's.
 */
function readHarnessChange(
  timeline: ConversationTimeline,
  turnId: string,
  current: { document: HarnessDocument; hash: string },
  previous: { document: HarnessDocument; hash: string } | undefined,
): TimelineEventOf<"harness_changed">[] {
  const from = timeline.lastHarnessHash();
  if (from === undefined || from === "" || from === current.hash) return [];
  const changed =
    previous?.hash === from
      ? listChangedPaths(previous.document as unknown as JsonValue, current.document as unknown as JsonValue)
      : undefined;
  return [{ type: "harness_changed", turnId, from, to: current.hash, ...(changed ? { changed } : {}) }];
}

/** Where two documents differ, as JSON pointers cut to their first three segments, each once, in patch order. */
function listChangedPaths(from: JsonValue, to: JsonValue): string[] {
  const paths = new Set<string>();
  for (const { path } of diffJson(from, to)) {
    paths.add(path.split("/").slice(0, 4).join("/"));
    if (paths.size >= MAX_HARNESS_CHANGED_PATHS) break;
  }
  return [...paths];
}

/** Instructions (when they changed since the last ones) and an item array's earlier messages. */
function readOpening(
  timeline: ConversationTimeline,
  turnId: string,
  request: StartTurnRequest,
): TimelineEvent[] {
  const opening: TimelineEvent[] = [];
  if (request.instructions !== undefined) {
    if (timeline.lastInstructions() !== request.instructions)
      opening.push({ type: "instructions", turnId, text: request.instructions });
  }
  if (request.context && request.context.length > 0)
    opening.push({ type: "context_messages", turnId, messages: request.context });
  return opening;
}

function refuse(
  status: TurnRefusal["status"],
  code: string,
  message: string,
  param?: string,
): StartTurnResult {
  return { ok: false, refusal: { status, code, message, ...(param === undefined ? {} : { param }) } };
}

function streamParts(parts: AsyncIterable<TurnStreamPart>): ReadableStream<Uint8Array> {
  const { stream, push, close } = createPartStream<TurnStreamPart>();
  void (async () => {
    for await (const part of parts) push(part);
    close();
  })();
  return stream;
}
