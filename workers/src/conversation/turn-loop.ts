/**
 * The turn loop: one turn, stored (`/v1/responses`, conversations) or stateless (`/v1/chat/completions`), always in
 * this order:
 *
 * 1. route — a forced label, else the router hop on the router's view with this turn's user line (rendered as
 *    it will be appended), else the fallback (the previous specialist, else the harness default).
 * 2. user message — `user_message` (after the turn's changed `instructions` and an item array's
 *    `context_messages`, if any; a turn whose function tools differ from the ones the views last showed has
 *    `tools_changed` right after it, stored turns only: a stateless prompt shows the request's tools itself),
 *    then `route_decision` (no await between); the client gets `turn-start`. Under the harness's `interim`
 *    summary wait (the default) nothing waits: if the previous turn's summary is still running, the other
 *    specialists' views get that turn's interim line first (views-reducer.ts), and the route decision says so
 *    (`summaryInterim`). Under `bounded`, a turn routed to another specialist than the previous turn's first
 *    waits (bounded) for that turn's summary, so its view holds it in full; see {@link SummarySchedule}.
 * 3. streamed answer — the specialist's deltas (text, or function-call arguments under a `tools` constraint) go
 *    to the client as they come; the client's cancel (or a cancel by request, `POST /v1/responses/{id}/cancel`)
 *    aborts the hop. A node lost mid-stream is replaced by one that continues the answer from the text streamed
 *    (`runAnswerHop`).
 * 4. append — `answer`, then for a genui answer its `genui_validation` (validated, stored when valid, see
 *    validate-genui-answer.ts; client gets `turn-finish`), or `turn_failed` (`turn-error`) or `turn_cancelled`;
 *    the client's stream ends here, so nothing below is on its critical path.
 * 5. webhook outbox — the turn's event (completed, or failed/cancelled) goes to the outbox.
 * 6. summary — stored turns with an answer only: the summary hop → `summary` | `summary_failed`, then its event.
 *    It runs after the turn has left the conversation's queue: the next turn may already be routing.
 * 7. token charging — every hop's tokens against the tenant: the nodes' own figures, or for an answer that was
 *    cancelled or failed (the node never sent them) an estimate, see {@link measureTurnCharge}; and the same
 *    hops, per adapter, to the usage recorder under the turn's key and end user ({@link measureTurnUsage}).
 *
 * Stored turns of one conversation run steps 1–5 one at a time (conversation-turns.ts). The summary of the
 * previous turn reaches the other specialists' views in full only if it lands before the next turn's user line:
 * a turn routed to the previous turn's own specialist never waits for it (that specialist saw the whole
 * answer), and a summary that lands later reaches only the compact forms of its turn.
 * Everything is injected (hops, placement, clock, ids, meter, outbox, storage): no runtime is assumed here.
 */
import { toWireErrorPayload, type OutputConstraint } from "../../../schema/wire/v2/index.ts";
import { toolsChanged, type ViewTool } from "../../../schema/harness/tools-block.ts";
import { readSummaryWait } from "../../../schema/harness/harness-settings.ts";
import type { TimelineEvent, TimelineEventOf } from "../db/timeline-event.ts";
import { createPartStream } from "../lib/create-part-stream.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import {
  measureTurnCharge,
  measureTurnUsage,
  type PartialAnswer,
  type UsageMeter,
  type UsageRecorder,
} from "./charge-turn.ts";
import type { StartTurnRequest, StartTurnResult, StatelessTurnRequest } from "./conversation-rpc.ts";
import type { ConversationMeta } from "./conversation-store.ts";
import { createMessagesTimeline, type Timeline } from "./timeline.ts";
import type { SummarySchedule } from "./summary-schedule.ts";
import { decideRoute, runAnswerHop, summarizeTurn, type AnswerProgress, type HopDeps } from "./turn-hops.ts";
import type { TurnRecord, TurnStreamPart } from "./turn-record.ts";
import { validateGenuiAnswer, type GenuiAnswerDeps } from "./validate-genui-answer.ts";
import { StageClock } from "../lib/stage-timings.ts";

export interface TurnLoopDeps extends HopDeps {
  /** The harness document's hash, recorded on each user message (computing it may be asynchronous). */
  harnessHash: string | Promise<string>;
  /**
   * The harness for the turn about to start, when it depends on what the fleet serves (the served model's chat
   * format and context); overrides `harness` and `harnessHash` for that turn. A new harness changes the hash,
   * so the stored views rebuild from the timeline.
   */
  resolveHarness?: () => Promise<{ harness: HopDeps["harness"]; harnessHash: string }>;
  /** A new turn id in `conversationId` (stored turn ids name their conversation, see item-id.ts). */
  newTurnId: (conversationId: string) => string;
  meter: UsageMeter;
  /** Usage by key, end user and adapter; without it only the tenant's meter counts tokens. */
  usage?: UsageRecorder;
  /** Where a genui answer's valid component is stored; without it genui answers are only validated. */
  genui?: GenuiAnswerDeps;
}

/** Where a stored conversation's webhook events go first (the Durable Object's outbox, then the queues). */
export interface TurnOutbox {
  emit(meta: ConversationMeta, turn: TurnRecord, phase: "turn" | "summary"): Promise<void>;
}

export interface TurnJob {
  tenantId: string;
  conversationId: string;
  placementKey?: string | undefined;
  turnId: string;
  text: string;
  /** The `function_call_output` items the input was; stored with the user message for the items list. */
  toolResults?: StartTurnRequest["toolResults"];
  forcedLabel?: string | undefined;
  sampling?: StartTurnRequest["sampling"];
  apiOrigin?: string | undefined;
  response?: StartTurnRequest["response"];
  attribution?: StartTurnRequest["attribution"];
  harnessHash: string;
  timeline: Timeline;
  /** Appended before the user message (changed instructions, an item array's earlier messages). */
  opening?: TimelineEvent[];
  /** The turn's function tools: shown in the specialist's views (a change appends `tools_changed`). */
  tools?: ViewTool[] | undefined;
  /** What the answer is decoded under (tools, JSON schema, JSON object). */
  constraint?: OutputConstraint | undefined;
  outbox?: { meta: ConversationMeta; outbox: TurnOutbox };
  client: TurnClient;
  /** `POST /v1/responses/{id}/cancel`: aborts like a disconnect, recorded as a cancel by request. */
  cancel?: AbortSignal;
  /** The conversation's running summaries (stored turns); absent for a stateless turn. */
  summaries?: SummarySchedule;
  /** Lets the next turn of the conversation start: called once the answer is stored and its event emitted. */
  release?: () => void;
  /** Where the turn's stage durations go (sent with `turn-finish`); a fresh clock when absent. */
  stages?: StageClock;
}

/** Where a turn's parts go: the client's stream (whose cancel is `signal`), and any attached readers. */
export interface TurnClient {
  push(part: TurnStreamPart): void;
  close(): void;
  signal: AbortSignal;
}

/** Why a turn was cancelled; a client-disconnect cancel is never replayed for a retry with the same key. */
export const CANCELLED_BY_DISCONNECT = "client disconnected";
export const CANCELLED_BY_REQUEST = "cancelled by request";

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
      placementKey: request.placementKey,
      turnId: deps.newTurnId(request.conversationKey),
      text: last?.content ?? "",
      forcedLabel: request.forcedLabel,
      sampling: request.sampling,
      apiOrigin: request.apiOrigin,
      attribution: request.attribution,
      harnessHash,
      timeline: createMessagesTimeline(request.messages, deps.harness, deps.now, request.tools),
      tools: request.tools,
      constraint: request.constraint,
      client,
    });
  })().catch(() => client.close());
  return { ok: true, stream: client.stream };
}

/** The deps of one turn, its harness resolved (a resolver that fails leaves the configured one). */
export async function resolveTurnDeps<D extends TurnLoopDeps>(deps: D): Promise<D & { harnessHash: string }> {
  const resolved = await deps.resolveHarness?.().catch(() => undefined);
  if (resolved) return { ...deps, ...resolved };
  return { ...deps, harnessHash: await deps.harnessHash };
}

/** One turn, in the order documented at the top of this file. Never throws: failures become timeline events. */
export async function runTurnLoop(deps: TurnLoopDeps, job: TurnJob): Promise<void> {
  const { timeline, turnId, client, conversationId, placementKey } = job;
  const signal = job.cancel ? AbortSignal.any([client.signal, job.cancel]) : client.signal;
  const { harness } = deps;
  const stages = job.stages ?? new StageClock(deps.now);
  const record = () =>
    stages.timeSync("record", () => buildTurnRecord(conversationId, timeline.readTurn(turnId)));
  const append = (...events: Parameters<Timeline["append"]>) =>
    stages.timeSync("timeline", () => timeline.append(...events));
  let partial: PartialAnswer | undefined;
  let reported = false;
  try {
    const forced = job.forcedLabel ? { forcedLabel: job.forcedLabel } : {};
    // Right after the user message, so the block ends the turn's opening in every specialist's view.
    const shownTools = timeline.shownTools?.();
    const toolsEvent: TimelineEventOf<"tools_changed">[] =
      timeline.shownTools && toolsChanged(shownTools, job.tools ?? [])
        ? [{ type: "tools_changed", turnId, tools: job.tools ?? [] }]
        : [];
    const incoming = [
      ...(job.opening ?? []),
      {
        type: "user_message",
        turnId,
        text: job.text,
        harnessHash: job.harnessHash,
        ...forced,
        ...(job.response ? { response: job.response } : {}),
        ...(job.toolResults ? { toolResults: job.toolResults } : {}),
      } satisfies TimelineEventOf<"user_message">,
      ...toolsEvent,
    ];
    const routeQuestion = stages.timeSync("views", () => ({
      prompt: timeline.routePrompt(incoming),
      previousLabel: timeline.lastAnsweredLabel(),
      lastNodeId: timeline.lastNodeFor(harness.router.adapter),
    }));
    const routed = await stages.time("route", () =>
      decideRoute(deps, {
        conversationId,
        placementKey,
        turnId,
        tenantId: job.tenantId,
        ...forced,
        ...routeQuestion,
      }),
    );
    const { summaries } = job;
    const wait = readSummaryWait(harness);
    const summaryWaitMs =
      summaries && wait.mode === "bounded"
        ? await stages.time("summaryWait", () => waitForSummary(deps, summaries, routed.label, wait.maxMs))
        : undefined;
    // Read right before the user line goes in (no await between): whether the reducer adds an interim line.
    const summaryInterim = wait.mode === "interim" && summaries?.running(timeline) === true;
    const decision = {
      ...routed,
      ...(summaryWaitMs === undefined ? {} : { summaryWaitMs }),
      ...(summaryInterim ? { summaryInterim } : {}),
    };
    append(...incoming);
    job.summaries?.clear();
    append(decision);
    client.push({ type: "turn-start", turn: record() });

    const { label } = decision;
    const prompt = stages.timeSync("views", () => timeline.answerPrompt(label));
    const progress: AnswerProgress = { nodeStarted: false, streamedChars: 0 };
    let answered = false;
    try {
      const answer = await stages.time("answer", () =>
        runAnswerHop(deps, {
          conversationId,
          placementKey,
          turnId,
          tenantId: job.tenantId,
          label,
          prompt,
          sampling: job.sampling,
          lastNodeId: timeline.lastNodeFor(harness.specialists[label]?.adapter ?? label),
          signal,
          progress,
          onDelta: (delta) => client.push({ type: "text-delta", delta }),
          constraint: job.constraint,
          onToolCallDelta: (part) => client.push({ type: "tool-call-delta", ...part }),
        }),
      );
      append(answer);
      answered = true;
      const genui = await validateGenuiAnswer(deps.genui, {
        turnId,
        tenantId: job.tenantId,
        label,
        text: answer.text,
        apiOrigin: job.apiOrigin,
      });
      if (genui) append(genui);
      const turn = record();
      client.push({ type: "turn-finish", turn, stages: stages.timings });
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
        const { code, message, retryAfterMs } = toWireErrorPayload(error);
        timeline.append({ type: "turn_failed", turnId, hop: "answer", code, message });
        const hint = retryAfterMs === undefined ? {} : { retryAfterMs };
        client.push({ type: "turn-error", turn: record(), error: { code, message, ...hint } });
      }
    }
    client.close();
    reported = true;
    await emitEvent(job, record(), "turn");

    const summaryPrompt = timeline.summaryPrompt?.bind(timeline);
    if (answered && summaryPrompt) {
      const adapter = harness.specialists[label]?.adapter ?? label;
      // Started (its prompt read) before the next turn may append anything, then awaited outside the queue.
      const summarized = summarizeTurn(deps, {
        conversationId,
        turnId,
        tenantId: job.tenantId,
        label,
        prompt: () => summaryPrompt(label),
        turn: job.summaries?.turnFor(adapter),
        lastNodeId: timeline.lastNodeFor(adapter),
      }).then((summary) => {
        if (summary) timeline.append(summary);
      });
      job.summaries?.add(turnId, adapter, summarized);
      job.release?.();
      await summarized;
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
    const usage = turn && measureTurnUsage(turn, partial, { ...job, routerAdapter: harness.router.adapter });
    if (usage && usage.hops.length > 0 && deps.usage) await deps.usage.record(usage).catch(() => undefined);
  }
}

/**
 * Waits for the previous turn's summary when `label`'s specialist would see it, at most `maxMs` when the harness
 * sets it, else the summary's harness timeout capped by the reply deadline (a turn waits no longer for a summary
 * than for a route): the ms waited. A node busy with other conversations' turns may hold that summary back
 * meanwhile (hop-priority.ts); the wait then ends at its bound, as for a slow node.
 */
async function waitForSummary(
  deps: TurnLoopDeps,
  summaries: SummarySchedule,
  label: string,
  maxMs: number | undefined,
): Promise<number | undefined> {
  const specialist = deps.harness.specialists[label];
  const adapter = specialist?.adapter ?? label;
  const limitMs =
    maxMs ?? Math.min(specialist?.summary.timeoutMs ?? deps.hopTimeouts.replyMs, deps.hopTimeouts.replyMs);
  return summaries.waitFor(adapter, limitMs, deps.now);
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
