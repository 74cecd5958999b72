import { toWireErrorPayload } from "../../../schema/wire/v1/index.ts";
import { renderAnswerPrompt, renderRoutePrompt } from "../views/render-prompts.ts";
import { buildTurnRecord } from "./build-turn-record.ts";
import { decideRoute } from "./decide-route.ts";
import { runAnswerHop } from "./run-answer-hop.ts";
import { summarizeTurn } from "./summarize-turn.ts";
import type { TurnContext, TurnInput, TurnOutcome } from "./turn-context.ts";
import type { TurnStreamPart } from "./turn-record.ts";

const NOTHING_TO_SUMMARIZE: TurnOutcome = { summarize: async () => undefined };

/**
 * One turn: user message → route hop (with fallback) → streamed answer hop → answer in the timeline. The caller
 * streams `emit`'s parts to the client, ends the response, then calls `summarize()` before the next turn.
 */
export async function runTurn(
  ctx: TurnContext,
  input: TurnInput,
  emit: (part: TurnStreamPart) => void,
  clientSignal: AbortSignal,
): Promise<TurnOutcome> {
  const { timeline, harness } = ctx;
  const { turnId } = input;
  const record = () => buildTurnRecord(ctx.conversationId, timeline.readTurn(turnId));
  const forced = input.forcedLabel ? { forcedLabel: input.forcedLabel } : {};
  timeline.append({
    type: "user_message",
    turnId,
    text: input.text,
    harnessHash: ctx.harnessHash,
    ...forced,
  });
  const decision = await decideRoute({
    ...ctx,
    turnId,
    prompt: renderRoutePrompt(timeline.views, harness),
    ...forced,
    previousLabel: timeline.lastAnsweredLabel(),
    lastNodeId: timeline.lastNodeFor(harness.router.adapter),
  });
  timeline.append(decision);
  emit({ type: "turn-start", turn: record() });

  let streamed = 0;
  try {
    const answer = await runAnswerHop({
      ...ctx,
      turnId,
      label: decision.label,
      prompt: renderAnswerPrompt(timeline.views, decision.label, harness),
      sampling: input.sampling,
      lastNodeId: timeline.lastNodeFor(harness.specialists[decision.label]?.adapter ?? decision.label),
      signal: clientSignal,
      onDelta: (delta) => {
        streamed += delta.length;
        emit({ type: "text-delta", delta });
      },
    });
    timeline.append(answer);
  } catch (error) {
    if (clientSignal.aborted) {
      timeline.append({
        type: "turn_cancelled",
        turnId,
        reason: "client disconnected",
        partialChars: streamed,
      });
      return NOTHING_TO_SUMMARIZE;
    }
    const { code, message } = toWireErrorPayload(error);
    timeline.append({ type: "turn_failed", turnId, hop: "answer", code, message });
    emit({ type: "turn-error", turn: record(), error: { code, message } });
    return NOTHING_TO_SUMMARIZE;
  }
  emit({ type: "turn-finish", turn: record() });
  return { summarize: () => summarizeTurn(ctx, turnId, decision.label) };
}
