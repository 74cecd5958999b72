import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { findSpecialist } from "../../../schema/harness/find-specialist.ts";
import { renderAnswerLine, renderRouteLine } from "../../../schema/harness/render-view-lines.ts";
import { replaceLoneSurrogates } from "../../../schema/harness/replace-lone-surrogates.ts";
import { appendToViewTurn } from "./append-to-view-turn.ts";
import type { ConversationViews, TurnProgress } from "./conversation-views.ts";
import { measureViewRoomBytes } from "./measure-view-room-bytes.ts";

/** The route line goes to the router's view only, right after the route cue its prompt ended with. */
export function applyRouteDecision(
  views: ConversationViews,
  event: TimelineEventOf<"route_decision">,
  harness: HarnessDocument,
): ConversationViews {
  const turn = readOpenTurn(views, event.turnId);
  if (!turn || turn.label !== null || turn.answeredBy !== null) return views;
  const label = replaceLoneSurrogates(event.label);
  const line = renderRouteLine(harness, label);
  return {
    ...views,
    turn: { ...turn, label },
    views: views.views.map((view) =>
      view.adapter === harness.router.adapter
        ? appendToViewTurn(
            view,
            turn.turnId,
            { full: line, compact: line },
            measureViewRoomBytes(view, harness).budgetBytes,
          )
        : view,
    ),
  };
}

/** The answer goes to the answering specialist's view only; its compact form is the summary, added later. */
export function applyAnswer(
  views: ConversationViews,
  event: TimelineEventOf<"answer">,
  harness: HarnessDocument,
): ConversationViews {
  const turn = readOpenTurn(views, event.turnId);
  const specialist = findSpecialist(harness, event.adapter);
  if (!turn || turn.answeredBy !== null || !specialist) return views;
  const line = renderAnswerLine(harness, replaceLoneSurrogates(event.text), specialist.answerViewMaxBytes);
  return {
    ...views,
    turn: { ...turn, answeredBy: event.adapter },
    views: views.views.map((view) =>
      view.adapter === event.adapter
        ? appendToViewTurn(view, turn.turnId, { full: line }, measureViewRoomBytes(view, harness).budgetBytes)
        : view,
    ),
  };
}

/** A failed or cancelled turn appends nothing: its user line stays, and the next turn follows it. */
export function applyTurnEnd(views: ConversationViews, turnId: string): ConversationViews {
  const turn = readOpenTurn(views, turnId);
  return turn ? { ...views, turn: { ...turn, ended: true } } : views;
}

/** The turn in progress, if the event belongs to it and it has not ended. */
function readOpenTurn(views: ConversationViews, turnId: string): TurnProgress | null {
  const turn = views.turn;
  return turn && turn.turnId === turnId && !turn.ended ? turn : null;
}
