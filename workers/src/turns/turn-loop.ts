/**
 * The turn loop: one turn, stored (`/v1/responses`, conversations) or stateless (`/v1/chat/completions`), as the
 * program of steps its harness names (schema/harness/harness-settings.ts `turn`; workers/src/steps/). The default
 * program, and what each step does:
 *
 * 1. route — a forced label, else the router's choice on the router's view with this turn's user line (rendered as
 *    it will be appended), else the fallback (the previous specialist, else the harness default). It then opens
 *    the turn ({@link StepContext.open}): `user_message` (after the turn's changed `instructions` and an item
 *    array's `context_messages`, if any; a turn whose function tools differ from the ones the views last showed has
 *    `tools_changed` right after it, stored turns only: a stateless prompt shows the request's tools itself), then
 *    `route_decision` (no await between); the client gets `turn-start`. Under the harness's `interim` summary wait
 *    (the default) nothing waits: if the previous turn's summary is still running, the other specialists' views get
 *    that turn's interim line first (views-reducer.ts), and the route decision says so (`summaryInterim`). Under
 *    `bounded`, a turn routed to another specialist than the previous turn's first waits (bounded) for that turn's
 *    summary, so its view holds it in full; see {@link SummarySchedule}. A program without a route step opens the
 *    turn before its first step, under the forced label or the harness default.
 * 2. answer — the specialist's deltas (text, or function-call arguments under a `tools` constraint) go to the client
 *    as they come; the client's cancel (or a cancel by request, `POST /v1/responses/{id}/cancel`) aborts it. A node
 *    lost mid-stream is replaced by one that continues the answer from the text streamed (generate/stream-text.ts).
 *    Appends `answer`.
 * 3. genui-check — a genui answer's `genui_validation` (validated, stored when valid, see validate-genui-answer.ts).
 * 4. output-check — a JSON or tools answer's `step` verdicts: JSON output and tool arguments parse and validate.
 *
 * Then the loop ends the client's stream: `turn-finish`, or `turn_failed` (`turn-error`) when a step threw or the
 * program stopped without an answer, or `turn_cancelled`; nothing below is on the client's critical path. The
 * turn's webhook event goes to the outbox, the next turn may start, and the background steps run:
 * 5. summary — stored turns with an answer only: `summary` | `summary_failed`, then its webhook event.
 * Last, token charging: every hop's tokens against the tenant: the nodes' own figures, or for an answer that was
 * cancelled or failed (the node never sent them) an estimate, see {@link measureTurnCharge}; and the same hops, per
 * adapter, to the usage recorder under the turn's key and end user ({@link measureTurnUsage}).
 *
 * Critical steps run in program order; a step may send the turn back or ahead to a named step (a repair after a
 * check), and the program's `stop` bounds the steps run, the completion tokens spent and the time taken. Stored
 * turns of one conversation run up to their background steps one at a time (conversation-turns.ts). The summary of
 * the previous turn reaches the other specialists' views in full only if it lands before the next turn's user line:
 * a turn routed to the previous turn's own specialist never waits for it (that specialist saw the whole answer), and
 * a summary that lands later reaches only the compact forms of its turn.
 * Everything is injected (the generate client, placement, clock, ids, meter, outbox, storage): no runtime is assumed.
 */
import {
  BudgetExceededError,
  EngineFailureError,
  toWireErrorPayload,
  type OutputConstraint,
} from "../../../schema/wire/v2/index.ts";
import { toolsChanged, type ViewTool } from "../../../schema/harness/tools-block.ts";
import { readSummaryWait } from "../../../schema/harness/harness-settings.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import type { TimelineEvent, TimelineEventOf } from "../db/timeline-event.ts";
import type {
  ChosenHarness,
  HarnessChoice,
  HarnessChoiceInput,
} from "../harness-registry/choose-turn-harness.ts";
import type { TurnOutcomeRecorder } from "../harness-registry/guard-rollout.ts";
import {
  categorizeStepEvent,
  readTurnFailures,
  type FailureCategory,
} from "../harness-registry/turn-failures.ts";
import { createPartStream } from "../lib/create-part-stream.ts";
import { buildTurnRecord } from "../conversation/build-turn-record.ts";
import {
  measureTurnCharge,
  measureTurnUsage,
  type PartialAnswer,
  type UsageMeter,
  type UsageRecorder,
} from "../conversation/charge-turn.ts";
import type {
  StartTurnRequest,
  StartTurnResult,
  StatelessTurnRequest,
} from "../conversation/conversation-rpc.ts";
import type { ConversationMeta } from "../conversation/conversation-store.ts";
import { createMessagesTimeline, type Timeline } from "../conversation/timeline.ts";
import type { SummarySchedule } from "../conversation/summary-schedule.ts";
import type { TurnRecord, TurnStreamPart } from "../conversation/turn-record.ts";
import { StageClock } from "../lib/stage-timings.ts";
import type { StepContext, StepDeps, StepResult, TurnState } from "../steps/step-kind.ts";
import {
  DEFAULT_STEP_KINDS,
  resolveTurnProgram,
  type ResolvedProgram,
  type ResolvedStep,
  type StepRegistry,
} from "../steps/step-registry.ts";

export interface TurnLoopDeps extends StepDeps {
  /** The harness document's hash, recorded on each user message (computing it may be asynchronous). */
  harnessHash: string | Promise<string>;
  /**
   * The harness for the turn about to start, when it depends on what the fleet serves (the served model's chat
   * format and context); overrides `harness` and `harnessHash` for that turn. A new harness changes the hash,
   * so the stored views rebuild from the timeline.
   */
  resolveHarness?: () => Promise<{ harness: HarnessDocument; harnessHash: string }>;
  /**
   * The registry's harness for a turn (a request or conversation pin, the tenant's production label and its
   * canary); undefined leaves the default above. Its choice is stored with the user message (`mol.harness`).
   */
  chooseHarness?: (input: HarnessChoiceInput) => Promise<ChosenHarness | undefined>;
  /** A new turn id in `conversationId` (stored turn ids name their conversation, see item-id.ts). */
  newTurnId: (conversationId: string) => string;
  meter: UsageMeter;
  /** Usage by key, end user and adapter; without it only the tenant's meter counts tokens. */
  usage?: UsageRecorder;
  /** The step kinds harness programs may name; default {@link DEFAULT_STEP_KINDS}. */
  steps?: StepRegistry;
  /** The guarded rollout: each turn a label chose, failed or not (harness-registry/guard-rollout.ts). */
  rollout?: TurnOutcomeRecorder;
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
  /** How the harness was chosen; absent where the caller did not ask the registry. */
  harnessChoice?: HarnessChoice | undefined;
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
    const deps = await resolveTurnDeps(loopDeps, {
      tenantId: request.tenantId,
      conversationKey: request.conversationKey,
      requestPin: request.harnessPin,
    });
    const { harnessHash, harnessChoice } = deps;
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
      harnessChoice,
      timeline: createMessagesTimeline(request.messages, deps.harness, deps.now, request.tools),
      tools: request.tools,
      constraint: request.constraint,
      client,
    });
  })().catch(() => client.close());
  return { ok: true, stream: client.stream };
}

/**
 * The deps of one turn, its harness resolved: the registry's choice when `choice` is given and it has one, else
 * the default for the served model (a resolver that fails leaves the configured one). With `choice`, the result
 * says how the harness was chosen (`source: "default"` when the registry had none).
 */
export async function resolveTurnDeps<D extends TurnLoopDeps>(
  deps: D,
  choice?: HarnessChoiceInput,
): Promise<D & { harnessHash: string; harnessChoice?: HarnessChoice }> {
  if (choice && deps.chooseHarness) {
    const chosen = await deps.chooseHarness(choice).catch(() => undefined);
    if (chosen)
      return {
        ...deps,
        harness: chosen.harness,
        harnessHash: chosen.harnessHash,
        harnessChoice: chosen.choice,
      };
  }
  const fallback: { harnessChoice?: HarnessChoice } = choice
    ? { harnessChoice: { label: null, arm: null, source: "default" } }
    : {};
  const resolved = await deps.resolveHarness?.().catch(() => undefined);
  if (resolved) return { ...deps, ...resolved, ...fallback };
  return { ...deps, harnessHash: await deps.harnessHash, ...fallback };
}

/** One turn, in the order documented at the top of this file. Never throws: failures become timeline events. */
export async function runTurnLoop(deps: TurnLoopDeps, job: TurnJob): Promise<void> {
  const { timeline, turnId, client } = job;
  const signal = job.cancel ? AbortSignal.any([client.signal, job.cancel]) : client.signal;
  const { harness } = deps;
  const stages = job.stages ?? new StageClock(deps.now);
  const started = deps.now();
  const record = () =>
    stages.timeSync("record", () => buildTurnRecord(job.conversationId, timeline.readTurn(turnId)));
  let completionTokens = 0;
  /** Steps' `fail` verdicts on the answer, by category: a failed turn for the rollout guard, the answer stands. */
  const stepFailures: FailureCategory[] = [];
  const append = (...events: TimelineEvent[]): void => {
    stages.timeSync("timeline", () => timeline.append(...events));
    for (const event of events) {
      completionTokens += spentTokens(event);
      const failure = event.type === "step" ? categorizeStepEvent(event) : undefined;
      if (failure) stepFailures.push(failure);
    }
  };
  const turn: TurnState = {
    turnId,
    tenantId: job.tenantId,
    conversationId: job.conversationId,
    placementKey: job.placementKey,
    text: job.text,
    forcedLabel: job.forcedLabel,
    sampling: job.sampling,
    tools: job.tools,
    constraint: job.constraint,
    apiOrigin: job.apiOrigin,
  };
  const incoming = readIncoming(job, timeline);
  // An object, not a `let`: it changes inside `open`, which control-flow narrowing cannot see.
  const state = { opened: false };
  let reported = false;
  let failedStep: string | undefined;
  const open = async (routed: TimelineEventOf<"route_decision">): Promise<void> => {
    if (state.opened) throw new Error("the turn is already open");
    const { summaries } = job;
    const wait = readSummaryWait(harness);
    const summaryWaitMs =
      summaries && wait.mode === "bounded"
        ? await stages.time("summaryWait", () => waitForSummary(deps, summaries, routed.label, wait.maxMs))
        : undefined;
    // Read right before the user line goes in (no await between): whether the reducer adds an interim line.
    const summaryInterim = wait.mode === "interim" && summaries?.running(timeline) === true;
    append(...incoming);
    summaries?.clear();
    append({
      ...routed,
      ...(summaryWaitMs === undefined ? {} : { summaryWaitMs }),
      ...(summaryInterim ? { summaryInterim } : {}),
    });
    state.opened = true;
    turn.label = routed.label;
    client.push({ type: "turn-start", turn: record() });
  };
  const contextFor = (step: ResolvedStep, background: boolean): StepContext => ({
    deps,
    turn,
    timeline,
    step: step.name,
    signal: background ? new AbortController().signal : signal,
    incoming,
    summaries: job.summaries,
    stages,
    get opened() {
      return state.opened;
    },
    open,
    append,
    push: background ? () => undefined : (part) => client.push(part),
    emit: async (phase) => emitEvent(job, record(), phase),
  });
  let partial: PartialAnswer | undefined;
  let program: ResolvedProgram | undefined;
  try {
    try {
      // A harness whose program names an unknown step or bad options fails its turns, recorded like any failure.
      program = resolveTurnProgram(harness, deps.steps ?? DEFAULT_STEP_KINDS);
      const stopped = await runCriticalSteps(program, (step) => {
        failedStep = step.name;
        return contextFor(step, false);
      });
      failedStep = undefined;
      // A program without a route step opens under the forced label, else the harness default.
      if (!state.opened) await open(defaultDecision(turn, harness));
      const { answer } = turn;
      if (!answer) {
        throw stopped
          ? new BudgetExceededError(`the turn's program stopped at its ${stopped} limit without an answer`)
          : new EngineFailureError("the turn's program ended without an answer");
      }
      if (!turn.answerStreamed) pushWhole(client, answer);
      client.push({ type: "turn-finish", turn: record(), stages: stages.timings });
    } catch (error) {
      if (!state.opened) await open(defaultDecision(turn, harness));
      partial = turn.inflight;
      if (signal.aborted) {
        const byRequest = job.cancel?.aborted === true;
        timeline.append({
          type: "turn_cancelled",
          turnId,
          reason: byRequest ? CANCELLED_BY_REQUEST : CANCELLED_BY_DISCONNECT,
          partialChars: partial?.streamedChars ?? 0,
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
        const step = failedStep !== undefined && failedStep !== "answer" ? { step: failedStep } : {};
        timeline.append({ type: "turn_failed", turnId, hop: "answer", ...step, code, message });
        const hint = retryAfterMs === undefined ? {} : { retryAfterMs };
        client.push({ type: "turn-error", turn: record(), error: { code, message, ...hint } });
      }
    }
    client.close();
    reported = true;
    const finished = record();
    await emitEvent(job, finished, "turn");
    // Off the client's path, before the summary: the turn's verdict for the label's rollout guard.
    const outcome = reportOutcome(deps, job, finished, stepFailures);
    // Started (their first reads done) before the next turn may append anything, then awaited outside the queue.
    const background = runBackgroundSteps(program?.background ?? [], (step) => contextFor(step, true));
    job.release?.();
    await Promise.all([background, outcome]);
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

  /**
   * Runs the critical steps in program order (or where a step sends the turn) until they are done, a step stops the
   * program, or its `stop` budget runs out: then it says which limit.
   */
  async function runCriticalSteps(
    program: ResolvedProgram,
    contextOf: (step: ResolvedStep) => StepContext,
  ): Promise<"steps" | "tokens" | "time" | undefined> {
    const { critical, stop } = program;
    let ran = 0;
    for (let index = 0; index < critical.length;) {
      if (ran >= stop.maxSteps) return "steps";
      if (stop.maxCompletionTokens !== undefined && completionTokens >= stop.maxCompletionTokens)
        return "tokens";
      if (stop.maxMs !== undefined && deps.now() - started >= stop.maxMs) return "time";
      const step = critical[index] as ResolvedStep;
      ran += 1;
      let result: StepResult;
      try {
        result = await step.kind.run(contextOf(step), step.options);
      } catch (error) {
        // A turn that has an answer keeps it when a later step fails (a check, a repair out of room): the failure is
        // that step's verdict, and the program ends there. Before any answer, or on a cancel, the turn fails.
        if (turn.answer === undefined || signal.aborted) throw error;
        const { code, message } = toWireErrorPayload(error);
        append({
          type: "step",
          turnId,
          step: step.name,
          kind: step.kind.kind,
          verdict: "fail",
          data: { code, message },
        });
        return undefined;
      }
      if (result && "stop" in result) return undefined;
      if (result && "goto" in result) {
        const target = critical.findIndex((s) => s.name === result.goto);
        if (target < 0)
          throw new Error(`step "${step.name}" went to "${result.goto}", which is no critical step`);
        index = target;
      } else index += 1;
    }
    return undefined;
  }
}

/** The events a turn opens with: changed instructions, an item array's earlier messages, the user message, tools. */
function readIncoming(job: TurnJob, timeline: Timeline): TimelineEvent[] {
  const { turnId } = job;
  const forced = job.forcedLabel ? { forcedLabel: job.forcedLabel } : {};
  // Right after the user message, so the block ends the turn's opening in every specialist's view.
  const shownTools = timeline.shownTools?.();
  const toolsEvent: TimelineEventOf<"tools_changed">[] =
    timeline.shownTools && toolsChanged(shownTools, job.tools ?? [])
      ? [{ type: "tools_changed", turnId, tools: job.tools ?? [] }]
      : [];
  return [
    ...(job.opening ?? []),
    {
      type: "user_message",
      turnId,
      text: job.text,
      harnessHash: job.harnessHash,
      ...(job.harnessChoice ? { harness: job.harnessChoice } : {}),
      ...forced,
      ...(job.response ? { response: job.response } : {}),
      ...(job.toolResults ? { toolResults: job.toolResults } : {}),
    } satisfies TimelineEventOf<"user_message">,
    ...toolsEvent,
  ];
}

/** The decision of a turn whose program does not route: the forced label, else the harness default. */
function defaultDecision(turn: TurnState, harness: HarnessDocument): TimelineEventOf<"route_decision"> {
  return {
    type: "route_decision",
    turnId: turn.turnId,
    label: turn.forcedLabel ?? harness.defaultLabel,
    source: "forced",
  };
}

/** Completion tokens an event's hop spent: what the `stop` budget's `maxCompletionTokens` counts. */
function spentTokens(event: TimelineEvent): number {
  if (event.type === "route_decision") return event.router?.usage.completionTokens ?? 0;
  if (event.type === "answer" || event.type === "summary") return event.hop.usage.completionTokens;
  return 0;
}

/** An answer the client has not seen streaming (its program held it back to check it) goes out whole. */
function pushWhole(client: TurnClient, answer: TimelineEventOf<"answer">): void {
  if (answer.toolCalls) {
    answer.toolCalls.forEach(({ id, name, arguments: args }, index) =>
      client.push({ type: "tool-call-delta", index, id, name, argumentsDelta: args }),
    );
  } else if (answer.text !== "") client.push({ type: "text-delta", delta: answer.text });
}

/** Background steps, in order, each failure kept to itself: started at once, so their first reads happen now. */
async function runBackgroundSteps(
  steps: readonly ResolvedStep[],
  contextOf: (step: ResolvedStep) => StepContext,
): Promise<void> {
  for (const step of steps) {
    await step.kind.run(contextOf(step), step.options).catch(() => undefined);
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

/** A turn a label chose, to its rollout guard; a guard that fails (D1 unreachable) is the guard's loss only. */
async function reportOutcome(
  deps: TurnLoopDeps,
  job: TurnJob,
  turn: TurnRecord,
  stepFailures: readonly FailureCategory[],
): Promise<void> {
  const choice = job.harnessChoice;
  if (!deps.rollout || !choice || choice.label === null || choice.arm === null) return;
  const failures = readTurnFailures(turn, stepFailures);
  if (failures === undefined) return;
  await deps.rollout
    .record({ tenantId: job.tenantId, turnId: job.turnId, harnessHash: job.harnessHash, choice, failures })
    .catch(() => undefined);
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
