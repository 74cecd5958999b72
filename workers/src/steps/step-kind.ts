import type { z } from "zod";
import type { TimelineEvent, TimelineEventOf } from "../db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import type { ViewTool } from "../../../schema/harness/tools-block.ts";
import type { OutputConstraint } from "../../../schema/wire/v2/index.ts";
import type { PartialAnswer } from "../conversation/charge-turn.ts";
import type { SamplingOverrides } from "../conversation/conversation-rpc.ts";
import type { SummarySchedule } from "../conversation/summary-schedule.ts";
import type { Timeline } from "../conversation/timeline.ts";
import type { TurnStreamPart } from "../conversation/turn-record.ts";
import type { GenuiAnswerDeps } from "../conversation/validate-genui-answer.ts";
import type { GenerateDeps } from "../generate/generate-deps.ts";
import type { AnswerConstraint } from "../generate/stream-text.ts";
import type { StageClock } from "../lib/stage-timings.ts";

/**
 * A turn is a program of steps (the harness's `turn`, schema/harness/harness-settings.ts): route, answer, the genui
 * check and, in the background, the summary by default. A step kind is one concept file here: its options schema and
 * what it does with the turn, through {@link StepContext}; registered in step-registry.ts. Steps reach the GPU nodes
 * only through the `generate` functions (workers/src/generate/) and the timeline only by appending events, so the
 * views stay a pure function of the timeline whatever steps ran.
 */

/** What the steps need beyond the turn: the generate transport and placement, the harness, the genui store. */
export interface StepDeps extends GenerateDeps {
  harness: HarnessDocument;
  /** Where a genui answer's valid component is stored; without it genui answers are only validated. */
  genui?: GenuiAnswerDeps | undefined;
}

/** The turn as its steps share it: what the request asked, and what earlier steps decided. */
export interface TurnState {
  readonly turnId: string;
  readonly tenantId: string;
  /** The KV slot key on the nodes (the conversation id, or a stateless client's cache key). */
  readonly conversationId: string;
  readonly placementKey?: string | undefined;
  /** The user message. */
  readonly text: string;
  readonly forcedLabel?: string | undefined;
  readonly sampling?: SamplingOverrides | undefined;
  /** The turn's function tools (shown in the specialists' views). */
  readonly tools?: ViewTool[] | undefined;
  /**
   * What the request asks the answer to be decoded under (tools, JSON schema, JSON object); the specialist's harness
   * settings narrow or fill it in (answer-constraint.ts).
   */
  readonly constraint?: OutputConstraint | undefined;
  readonly apiOrigin?: string | undefined;
  /** The specialist the turn went to, once it opened (see {@link StepContext.open}). */
  label?: string;
  /** The turn's answer: its latest `answer` event (a repair's revision replaces the first). */
  answer?: TimelineEventOf<"answer">;
  /** What {@link answer} was decoded under (absent: free text), for the steps that check it. */
  answerConstraint?: AnswerConstraint | undefined;
  /** Whether the client has already received {@link answer} as it streamed; if not, it is sent when the turn ends. */
  answerStreamed?: boolean;
  /** The answer being generated: how far it got, which a turn that fails or is cancelled is charged by. */
  inflight?: PartialAnswer | undefined;
}

export interface StepContext {
  readonly deps: StepDeps;
  readonly turn: TurnState;
  readonly timeline: Timeline;
  /** The step's name in the program (its kind unless the program named it). */
  readonly step: string;
  /** The client's cancel (and a cancel by request); never aborted for a background step. */
  readonly signal: AbortSignal;
  /** The events the turn opens with: its instructions, earlier messages, user message and tools change. */
  readonly incoming: readonly TimelineEvent[];
  /** The conversation's running summaries (stored turns); absent for a stateless turn. */
  readonly summaries?: SummarySchedule | undefined;
  readonly stages: StageClock;
  /** Whether the turn has opened (its user message and route decision are in the timeline). */
  readonly opened: boolean;
  /**
   * Opens the turn under a route decision: waits for the previous turn's summary where the harness says so, appends
   * the incoming events and the decision with no await between, and tells the client the turn started. Once.
   */
  open(decision: TimelineEventOf<"route_decision">): Promise<void>;
  append(...events: TimelineEvent[]): void;
  /** A part for the client's stream (critical steps; background steps run after it has ended and push nothing). */
  push(part: TurnStreamPart): void;
  /** Sends the turn's webhook event for a phase that ends in this step (the summary's). */
  emit(phase: "summary"): Promise<void>;
}

/** Where the program goes after a step: on to the next step (undefined), back or ahead to a named one, or it stops. */
export type StepResult = { goto: string } | { stop: true } | undefined;

export interface StepKind<O = unknown> {
  /** The name harness programs use for it (`route`, `answer`, …). */
  readonly kind: string;
  /** Its `options` in a program; validated when the harness is resolved, so a bad program fails before any turn. */
  readonly options: z.ZodType<O>;
  run(ctx: StepContext, options: O): Promise<StepResult>;
}

/** Declares a step kind (an identity function, so the options' type flows from the schema to `run`). */
export function defineStep<O>(kind: StepKind<O>): StepKind<O> {
  return kind;
}
