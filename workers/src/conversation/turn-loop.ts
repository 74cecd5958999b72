/**
 * The turn loop: one turn, stored (`/v1/responses`, conversations) or stateless (`/v1/chat/completions`), always in
 * this order:
 *
 * 1. user message — `user_message` appended to the timeline.
 * 2. route — a forced label, else the router hop, else the fallback (the previous specialist, else the harness
 *    default) → `route_decision`; the client gets `turn-start`.
 * 3. streamed answer — the specialist's deltas go to the client as they come; the client's cancel aborts the hop.
 * 4. append — `answer`, then for a genui answer its `genui_validation` (validated, stored when valid, see
 *    validate-genui-answer.ts; client gets `turn-finish`), or `turn_failed` (`turn-error`) or `turn_cancelled`;
 *    the client's stream ends here, so nothing below is on its critical path.
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
import { createPartStream } from "../lib/create-part-stream.ts";
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
import { decideRoute, runAnswerHop, summarizeTurn, type AnswerProgress, type HopDeps } from "./turn-hops.ts";
import type { TurnRecord, TurnStreamPart } from "./turn-record.ts";
import { validateGenuiAnswer, type GenuiAnswerDeps } from "./validate-genui-answer.ts";

export interface TurnLoopDeps extends HopDeps {
  /** The harness document's hash, recorded on each user message (computing it may be asynchronous). */
  harnessHash: string | Promise<string>;
  /**
   * The harness for the turn about to start, when it depends on what the fleet serves (the served model's chat
   * format and context); overrides `harness` and `harnessHash` for that turn. A new harness changes the hash,
   * so the stored views rebuild from the timeline.
   */
  resolveHarness?: () => Promise<{ harness: HopDeps["harness"]; harnessHash: string }>;
  newTurnId: () => string;
  meter: UsageMeter;
  /** Where a genui answer's valid component is stored; without it genui answers are only validated. */
  genui?: GenuiAnswerDeps;
}

/** Where a stored conversation's webhook events go first (the Durable Object's outbox, then the queues). */
export interface TurnOutbox {
  emit(meta: ConversationMeta, turn: TurnRecord, phase: "turn" | "summary"): Promise<void>;
}

interface TurnJob {
  tenantId: string;
  conversationId: string;
  turnId: string;
  text: string;
  forcedLabel?: string | undefined;
  sampling?: StartTurnRequest["sampling"];
  apiOrigin?: string | undefined;
  harnessHash: string;
  timeline: Timeline;
  outbox?: { meta: ConversationMeta; outbox: TurnOutbox };
  client: ReturnType<typeof createPartStream<TurnStreamPart>>;
}

/** The stored turns of one conversation: idempotency, one turn at a time, each through {@link runTurnLoop}. */
export class ConversationTurns {
  readonly #deps: TurnLoopDeps & { store: ConversationStore; outbox: TurnOutbox };
  readonly #queue = new TurnQueue();

  constructor(deps: TurnLoopDeps & { store: ConversationStore; outbox: TurnOutbox }) {
    this.#deps = deps;
  }

  /**
   * Starts a turn, or refuses it: 404 without the conversation; with an Idempotency-Key already seen, 422 for
   * another body, 409 while that turn runs, else a replay of the finished turn (which runs no hop and costs
   * nothing). The key is taken before anything awaits, so two requests with one key cannot both start a turn.
   */
  startTurn(request: StartTurnRequest, turnId = this.#deps.newTurnId()): StartTurnResult {
    const { store } = this.#deps;
    const meta = store.readMeta();
    if (!meta)
      return refuse(404, "conversation_not_found", `conversation ${request.conversationId} not found`);
    if (request.idempotency) {
      const seen = store.readIdempotency(request.idempotency.key);
      if (seen && seen.requestHash !== request.idempotency.requestHash) {
        return refuse(
          422,
          "idempotency_key_reused",
          "this Idempotency-Key was used with a different request body",
        );
      }
      if (seen) {
        const events = store.readTurn(seen.turnId);
        const turn = events.length > 0 ? buildTurnRecord(meta.id, events) : undefined;
        if (!turn || turn.status === "in_progress") {
          return refuse(
            409,
            "idempotency_key_in_flight",
            "a request with this Idempotency-Key is still running",
          );
        }
        return { ok: true, stream: streamParts(replayTurnParts(turn)) };
      }
      store.writeIdempotency({ ...request.idempotency, turnId });
    }
    const client = createPartStream<TurnStreamPart>();
    void this.#queue.run(async () => {
      const deps = await resolveTurnDeps(this.#deps);
      const { harnessHash } = deps;
      await runTurnLoop(deps, {
        ...request,
        tenantId: meta.tenantId,
        conversationId: meta.id,
        turnId,
        harnessHash,
        timeline: new ConversationTimeline(store, deps.harness, harnessHash),
        outbox: { meta, outbox: this.#deps.outbox },
        client,
      });
    });
    return { ok: true, stream: client.stream };
  }

  /**
   * A turn nobody streams (an inbound webhook started it): its parts are drained here, so the answer runs to
   * completion and reaches the tenant through the outbound `conversation.turn.completed` event.
   */
  startDetachedTurn(
    request: StartTurnRequest,
  ): { ok: true; turnId: string } | { ok: false; refusal: TurnRefusal } {
    const turnId = this.#deps.newTurnId();
    const result = this.startTurn(request, turnId);
    if (!result.ok) return result;
    void result.stream.pipeTo(new WritableStream()).catch(() => undefined);
    return { ok: true, turnId };
  }

  /** Runs `task` once the running and queued turns are done (so no event lands after a delete, say). */
  afterTurns<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.run(task);
  }
}

/**
 * A stateless turn: the same loop over an in-memory timeline of the client's messages, with no summary and no
 * webhook; its tokens are charged to `request.tenantId` like any turn's.
 */
export function startStatelessTurn(loopDeps: TurnLoopDeps, request: StatelessTurnRequest): StartTurnResult {
  const client = createPartStream<TurnStreamPart>();
  const last = request.messages.at(-1);
  void (async () => {
    const deps = await resolveTurnDeps(loopDeps);
    const { harnessHash } = deps;
    await runTurnLoop(deps, {
      tenantId: request.tenantId,
      conversationId: request.conversationKey,
      turnId: deps.newTurnId(),
      text: last?.content ?? "",
      forcedLabel: request.forcedLabel,
      sampling: request.sampling,
      apiOrigin: request.apiOrigin,
      harnessHash,
      timeline: createMessagesTimeline(request.messages, deps.harness, deps.now),
      client,
    });
  })().catch(() => client.close());
  return { ok: true, stream: client.stream };
}

/** The deps of one turn, its harness resolved (a resolver that fails leaves the configured one). */
async function resolveTurnDeps<D extends TurnLoopDeps>(deps: D): Promise<D & { harnessHash: string }> {
  const resolved = await deps.resolveHarness?.().catch(() => undefined);
  if (resolved) return { ...deps, ...resolved };
  return { ...deps, harnessHash: await deps.harnessHash };
}

/** One turn, in the order documented at the top of this file. Never throws: failures become timeline events. */
async function runTurnLoop(deps: TurnLoopDeps, job: TurnJob): Promise<void> {
  const { timeline, turnId, client, conversationId } = job;
  const { harness } = deps;
  const record = () => buildTurnRecord(conversationId, timeline.readTurn(turnId));
  let partial: PartialAnswer | undefined;
  let reported = false;
  try {
    const forced = job.forcedLabel ? { forcedLabel: job.forcedLabel } : {};
    timeline.append({
      type: "user_message",
      turnId,
      text: job.text,
      harnessHash: job.harnessHash,
      ...forced,
    });
    const decision = await decideRoute(deps, {
      conversationId,
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
        turnId,
        label,
        prompt,
        sampling: job.sampling,
        lastNodeId: timeline.lastNodeFor(harness.specialists[label]?.adapter ?? label),
        signal: client.signal,
        progress,
        onDelta: (delta) => client.push({ type: "text-delta", delta }),
      });
      timeline.append(answer);
      answered = true;
      const genui = await validateGenuiAnswer(deps.genui, {
        turnId,
        tenantId: job.tenantId,
        label,
        text: answer.text,
        apiOrigin: job.apiOrigin,
      });
      if (genui) timeline.append(genui);
      client.push({ type: "turn-finish", turn: record() });
    } catch (error) {
      partial = { ...progress, promptChars: prompt.length };
      if (client.signal.aborted) {
        const { streamedChars } = progress;
        timeline.append({
          type: "turn_cancelled",
          turnId,
          reason: "client disconnected",
          partialChars: streamedChars,
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

function refuse(status: TurnRefusal["status"], code: string, message: string): StartTurnResult {
  return { ok: false, refusal: { status, code, message } };
}

function streamParts(parts: AsyncIterable<TurnStreamPart>): ReadableStream<Uint8Array> {
  const { stream, push, close } = createPartStream<TurnStreamPart>();
  void (async () => {
    for await (const part of parts) push(part);
    close();
  })();
  return stream;
}
