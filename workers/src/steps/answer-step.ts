import { z } from "zod";
import type { TimelineEventOf } from "../db/timeline-event.ts";
import { findSpecialist } from "../../../schema/harness/harness-settings.ts";
import { renderToolCallText } from "../conversation/tool-turn-text.ts";
import { streamText } from "../generate/stream-text.ts";
import { answerConstraintFor } from "./answer-constraint.ts";
import { defineStep, type StepContext } from "./step-kind.ts";

export interface AnswerOptions {
  /**
   * Deltas go to the client as they are decoded (the default). A program that checks its answers before the client
   * may see them holds them back (false): the turn's final answer then reaches the client whole when the turn ends.
   */
  stream: boolean;
  /** This answer revises the turn's earlier one (a repair after a check): it replaces it for the client. */
  revises?: boolean;
}

/**
 * The turn's specialist answers from its own view: streamed from the node placement picks, continued by another
 * node if that one is lost mid-stream (workers/src/generate/stream-text.ts), under the constraint of
 * {@link answerConstraintFor}. Appends the `answer` event and makes it the turn's answer. Throws the hop's typed error;
 * the turn loop records it.
 */
export async function answerTurn(
  ctx: StepContext,
  options: AnswerOptions,
): Promise<TimelineEventOf<"answer">> {
  const { turn, timeline, stages, deps } = ctx;
  const label = turn.label;
  if (label === undefined) throw new Error(`step "${ctx.step}" needs the turn to be routed first`);
  const specialist = findSpecialist(deps.harness, label);
  if (!specialist) throw new Error(`the harness has no specialist "${label}"`);
  const prompt = stages.timeSync("views", () => timeline.answerPrompt(label));
  const constraint = answerConstraintFor(turn.constraint, specialist);
  // streamText keeps it current, so a turn that fails or is cancelled mid-stream is charged for what it got.
  const inflight = { nodeStarted: false, streamedChars: 0, promptChars: prompt.length };
  turn.inflight = inflight;
  const streamed = await stages.time("answer", () =>
    streamText(deps, {
      purpose: "answer",
      turnId: turn.turnId,
      tenantId: turn.tenantId,
      slotKey: turn.conversationId,
      placementKey: turn.placementKey,
      lastNodeId: timeline.lastNodeFor(specialist.adapter),
      adapter: specialist.adapter,
      prompt,
      prefix: specialist.answerPrefix,
      sampling: { ...specialist.sampling, ...turn.sampling },
      timeoutMs: specialist.answerTimeoutMs,
      signal: ctx.signal,
      constraint,
      progress: inflight,
      onDelta: (delta) => {
        if (options.stream) ctx.push({ type: "text-delta", delta });
      },
      onToolCallDelta: (part) => {
        if (options.stream) ctx.push({ type: "tool-call-delta", ...part });
      },
    }),
  );
  const answer: TimelineEventOf<"answer"> = {
    type: "answer",
    turnId: turn.turnId,
    adapter: specialist.adapter,
    revision: streamed.revision,
    text: streamed.toolCalls ? renderToolCallText(streamed.toolCalls) : streamed.text,
    finishReason: streamed.finishReason,
    ...(streamed.toolCalls ? { toolCalls: streamed.toolCalls } : {}),
    hop: streamed.facts,
    ...(streamed.takeovers ? { takeovers: streamed.takeovers } : {}),
    ...(options.revises ? { revises: true as const } : {}),
  };
  ctx.append(answer);
  turn.answer = answer;
  turn.answerConstraint = constraint;
  turn.answerStreamed = options.stream;
  turn.inflight = undefined;
  return answer;
}

/** The answer step (see {@link answerTurn}). */
export const answerStep = defineStep({
  kind: "answer",
  options: z.strictObject({ stream: z.boolean().default(true) }),
  async run(ctx, options) {
    await answerTurn(ctx, options);
    return undefined;
  },
});
