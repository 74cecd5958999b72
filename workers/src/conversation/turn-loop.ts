/**
 * The turn loop: one turn, stored (`/v1/responses`, conversations) or stateless (`/v1/chat/completions`), always in
 * this order:
 *
 * 1. user message — `user_message` appended to the timeline.
 * 2. route — a forced label, else the router hop, else the fallback (the previous specialist, else the harness
 *    default) → `route_decision`; the client gets `turn-start`.
 * 3. streamed answer — the specialist's deltas go to the client as they come; the client's cancel aborts the hop.
 * 4. append — `answer` (client gets `turn-finish`), `turn_failed` (`turn-error`) or `turn_cancelled`; the client's
 *    stream ends here, so nothing below is on its critical path.
 * 5. webhook outbox — the turn's event (completed, or failed/cancelled) goes to the outbox.
 * 6. summary — stored turns with an answer only: the summary hop → `summary` | `summary_failed`, then its event.
 * 7. token charging — every hop's tokens against the tenant: the nodes' own figures, or for an answer that was
 *    cancelled or failed (the node never sent them) an estimate, see {@link measureTurnCharge}.
 *
 * Stored turns of one conversation run one at a time, so the next turn's views already hold this one's summary.
 * Everything is injected (hops, placement, clock, ids, meter, outbox, storage): no runtime is assumed here.
 */
import { toWireErrorPayload } from "../../../schema/wire/v1/index.ts";
import { replayTurnParts } from "../api/sse/replay-turn-parts.ts";
import type { TimelineEvent } from "../../../schema/db/timeline-event.ts";
import { createPartStream } from "../lib/create-part-stream.ts";
import { PartBroadcast } from "../lib/part-broadcast.ts";
import { TurnQueue } from "../lib/turn-queue.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import { measureTurnCharge, type PartialAnswer, type UsageMeter } from "./charge-turn.ts";
import { ConversationTimeline } from "./conversation-timeline.ts";
import type {
  StartTurnRequest,
  StartTurnResult,
  StatelessTurnRequest,
  TurnRefusal,
} from "./conversation-rpc.ts";
import type { ConversationMeta, ConversationStore } from "./conversation-store.ts";
import { createMessagesTimeline, type Timeline } from "./timeline.ts";
import { readItem, readLatestTurnId, readStoredTurn, readTombstones } from "./stored-turns.ts";
import { decideRoute, runAnswerHop, summarizeTurn, type AnswerProgress, type HopDeps } from "./turn-hops.ts";
import type { TurnRecord, TurnStreamPart } from "./turn-record.ts";

export interface TurnLoopDeps extends HopDeps {
  /** The harness document's hash, recorded on each user message (computing it may be asynchronous). */
  harnessHash: string | Promise<string>;
  /** A new turn id in `conversationId` (stored turn ids name their conversation, see item-id.ts). */
  newTurnId: (conversationId: string) => string;
  meter: UsageMeter;
}

/** Where a stored conversation's webhook events go first (the Durable Object's outbox, then the queues). */
export interface TurnOutbox {
  emit(meta: ConversationMeta, turn: TurnRecord, phase: "turn" | "summary"): Promise<void>;
}

interface TurnJob {
  tenantId: string;
  conversationId: string;
  placementKey?: string | undefined;
  turnId: string;
  text: string;
  forcedLabel?: string | undefined;
  sampling?: StartTurnRequest["sampling"];
  response?: StartTurnRequest["response"];
  harnessHash: string;
  timeline: Timeline;
  /** Appended before the user message (changed instructions, an item array's earlier messages). */
  opening?: TimelineEvent[];
  outbox?: { meta: ConversationMeta; outbox: TurnOutbox };
  client: TurnClient;
  /** `POST /v1/responses/{id}/cancel`: aborts like a disconnect, recorded as a cancel by request. */
  cancel?: AbortSignal;
}

/** Where a turn's parts go: the client's stream (whose cancel is `signal`), and any attached readers. */
interface TurnClient {
  push(part: TurnStreamPart): void;
  close(): void;
  signal: AbortSignal;
}

/** Finished turns whose parts stay in memory for stream resume, besides the running one. */
const KEPT_BROADCASTS = 8;

/** Why a turn was cancelled; a client-disconnect cancel is never replayed for a retry with the same key. */
export const CANCELLED_BY_DISCONNECT = "client disconnected";
export const CANCELLED_BY_REQUEST = "cancelled by request";

/**
 * The stored turns of one conversation: idempotency, one turn at a time, each through {@link runTurnLoop}; the
 * running turns' cancel switches and the live parts that late readers attach to.
 */
export class ConversationTurns {
  readonly #deps: TurnLoopDeps & { store: ConversationStore; outbox: TurnOutbox };
  readonly #queue = new TurnQueue();
  readonly #cancels = new Map<string, AbortController>();
  /** Settles when the turn's answer is decided (its client stream has ended); summary and charge may follow. */
  readonly #answered = new Map<string, Promise<void>>();
  readonly #broadcasts = new Map<string, PartBroadcast<TurnStreamPart>>();
  /** The latest turn including queued ones (the timeline only has it once its turn runs). */
  #claimedLatest: string | undefined;

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
  startTurn(request: StartTurnRequest, turnId?: string): StartTurnResult {
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
    void this.#queue.run(async () => {
      const harnessHash = await this.#deps.harnessHash;
      const timeline = new ConversationTimeline(store, this.#deps.harness, harnessHash);
      try {
        await runTurnLoop(this.#deps, {
          ...request,
          tenantId: meta.tenantId,
          conversationId: meta.id,
          turnId: id,
          harnessHash,
          timeline,
          opening: readOpening(store, id, request),
          outbox: { meta, outbox: this.#deps.outbox },
          client,
          cancel: cancel.signal,
        });
      } finally {
        this.#cancels.delete(id);
        this.#answered.delete(id);
        client.close();
      }
    });
    return { ok: true, stream: stream.stream };
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

  /** Resolves once the turn's answer is decided (answered, failed or cancelled); at once for one not running. */
  async settled(turnId: string): Promise<void> {
    await this.#answered.get(turnId);
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

  /** Runs `task` once the running and queued turns are done (so no event lands after a delete, say). */
  afterTurns<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.run(task);
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

/** Instructions (when they changed since the last ones) and an item array's earlier messages. */
function readOpening(store: ConversationStore, turnId: string, request: StartTurnRequest): TimelineEvent[] {
  const opening: TimelineEvent[] = [];
  if (request.instructions !== undefined) {
    const [last] = store.listEvents({ types: ["instructions"], order: "desc", limit: 1 });
    if (last?.type !== "instructions" || last.text !== request.instructions)
      opening.push({ type: "instructions", turnId, text: request.instructions });
  }
  if (request.context && request.context.length > 0)
    opening.push({ type: "context_messages", turnId, messages: request.context });
  return opening;
}

/**
 * A stateless turn: the same loop over an in-memory timeline of the client's messages, with no summary and no
 * webhook; its tokens are charged to `request.tenantId` like any turn's.
 */
export function startStatelessTurn(deps: TurnLoopDeps, request: StatelessTurnRequest): StartTurnResult {
  const client = createPartStream<TurnStreamPart>();
  const last = request.messages.at(-1);
  void (async () => {
    const harnessHash = await deps.harnessHash;
    await runTurnLoop(deps, {
      tenantId: request.tenantId,
      conversationId: request.conversationKey,
      placementKey: request.placementKey,
      turnId: deps.newTurnId(request.conversationKey),
      text: last?.content ?? "",
      forcedLabel: request.forcedLabel,
      sampling: request.sampling,
      harnessHash,
      timeline: createMessagesTimeline(request.messages, deps.harness, deps.now),
      client,
    });
  })().catch(() => client.close());
  return { ok: true, stream: client.stream };
}

/** One turn, in the order documented at the top of this file. Never throws: failures become timeline events. */
async function runTurnLoop(deps: TurnLoopDeps, job: TurnJob): Promise<void> {
  const { timeline, turnId, client, conversationId, placementKey } = job;
  const signal = job.cancel ? AbortSignal.any([client.signal, job.cancel]) : client.signal;
  const { harness } = deps;
  const record = () => buildTurnRecord(conversationId, timeline.readTurn(turnId));
  let partial: PartialAnswer | undefined;
  let reported = false;
  try {
    const forced = job.forcedLabel ? { forcedLabel: job.forcedLabel } : {};
    timeline.append(...(job.opening ?? []), {
      type: "user_message",
      turnId,
      text: job.text,
      harnessHash: job.harnessHash,
      ...forced,
      ...(job.response ? { response: job.response } : {}),
    });
    const decision = await decideRoute(deps, {
      conversationId,
      placementKey,
      turnId,
      prompt: timeline.routePrompt(),
      ...forced,
      previousLabel: timeline.lastAnsweredLabel(),
      lastNodeId: timeline.lastNodeFor(harness.router.adapter),
    });
    timeline.append(decision);
    client.push({ type: "turn-start", turn: record() });

    const { label } = decision;
    const prompt = timeline.answerPrompt(label);
    const progress: AnswerProgress = { nodeStarted: false, streamedChars: 0 };
    let answered = false;
    try {
      const answer = await runAnswerHop(deps, {
        conversationId,
        placementKey,
        turnId,
        label,
        prompt,
        sampling: job.sampling,
        lastNodeId: timeline.lastNodeFor(harness.specialists[label]?.adapter ?? label),
        signal,
        progress,
        onDelta: (delta) => client.push({ type: "text-delta", delta }),
      });
      timeline.append(answer);
      answered = true;
      client.push({ type: "turn-finish", turn: record() });
    } catch (error) {
      partial = { ...progress, promptChars: prompt.length };
      if (signal.aborted) {
        const { streamedChars } = progress;
        const byRequest = job.cancel?.aborted === true;
        timeline.append({
          type: "turn_cancelled",
          turnId,
          reason: byRequest ? CANCELLED_BY_REQUEST : CANCELLED_BY_DISCONNECT,
          partialChars: streamedChars,
        });
        // An attached reader (background, resume) still needs the end; a gone client ignores it.
        if (byRequest)
          client.push({
            type: "turn-error",
            turn: record(),
            error: { code: "cancelled", message: CANCELLED_BY_REQUEST },
          });
      } else {
        const { code, message } = toWireErrorPayload(error);
        timeline.append({ type: "turn_failed", turnId, hop: "answer", code, message });
        client.push({ type: "turn-error", turn: record(), error: { code, message } });
      }
    }
    client.close();
    reported = true;
    await emitEvent(job, record(), "turn");

    const summaryPrompt = timeline.summaryPrompt?.bind(timeline);
    if (answered && summaryPrompt) {
      const adapter = harness.specialists[label]?.adapter ?? label;
      const summary = await summarizeTurn(deps, {
        conversationId,
        turnId,
        label,
        prompt: () => summaryPrompt(label),
        lastNodeId: timeline.lastNodeFor(adapter),
      });
      if (summary) timeline.append(summary);
      await emitEvent(job, record(), "summary");
    }
  } catch (error) {
    // A bug or a storage failure, not a hop's: the client still gets an error part, never a silent end.
    const turn = readRecord(record);
    if (turn && !reported) {
      client.push({ type: "turn-error", turn, error: { code: "engine_failure", message: String(error) } });
      client.close();
      await emitEvent(job, turn, "turn");
    }
  } finally {
    client.close();
    const turn = readRecord(record);
    const charge = turn ? measureTurnCharge(turn.mol, partial) : undefined;
    if (charge && charge.tokens > 0) await deps.meter.record(job.tenantId, charge).catch(() => undefined);
  }
}

/** An outbox failure must not stop the summary or the charge; the outbox's own retry covers delivery. */
async function emitEvent(job: TurnJob, turn: TurnRecord, phase: "turn" | "summary"): Promise<void> {
  if (!job.outbox) return;
  await job.outbox.outbox.emit(job.outbox.meta, turn, phase).catch(() => undefined);
}

function readRecord(record: () => TurnRecord): TurnRecord | undefined {
  try {
    return record();
  } catch {
    return undefined;
  }
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
