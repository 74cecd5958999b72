import type { TimelineEvent } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { applyAnswer, applyRouteDecision, applyTurnEnd } from "./apply-hop-result.ts";
import { applySummary } from "./apply-summary.ts";
import { applyUserMessage } from "./apply-user-message.ts";
import type { ConversationViews } from "./conversation-views.ts";

export type { ConversationViews } from "./conversation-views.ts";
export { createConversationViews } from "./create-conversation-views.ts";

/**
 * The views after one more timeline event. Pure: returns a new state and never mutates `views`. Events that
 * do not fit the turn order (a route or answer for a turn no longer in progress, a repeated one) change
 * nothing, so the result depends on the timeline alone. `summary_failed` appends nothing.
 */
export function applyEventToViews(
  views: ConversationViews,
  event: TimelineEvent,
  harness: HarnessDocument,
): ConversationViews {
  switch (event.type) {
    case "user_message":
      return applyUserMessage(views, event, harness);
    case "route_decision":
      return applyRouteDecision(views, event, harness);
    case "answer":
      return applyAnswer(views, event, harness);
    case "summary":
      return applySummary(views, event, harness);
    case "turn_failed":
    case "turn_cancelled":
      return applyTurnEnd(views, event.turnId);
    case "summary_failed":
      return views;
  }
}
