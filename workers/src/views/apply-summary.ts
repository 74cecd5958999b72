import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { findSpecialist } from "../../../schema/harness/find-specialist.ts";
import { renderSummaryLine } from "../../../schema/harness/render-view-lines.ts";
import { replaceLoneSurrogates } from "../../../schema/harness/replace-lone-surrogates.ts";
import { appendToViewTurn } from "./append-to-view-turn.ts";
import type { ConversationViews } from "./conversation-views.ts";
import { measureViewRoomBytes } from "./measure-view-room-bytes.ts";

/**
 * The summary line goes to every OTHER specialist's view (a specialist sees its own turns in full), and into
 * every specialist's compact form of the turn. A summary that arrives after the next turn has started can no
 * longer be appended (that would rewrite the middle of the views); it still reaches the compact forms.
 */
export function applySummary(
  views: ConversationViews,
  event: TimelineEventOf<"summary">,
  harness: HarnessDocument,
): ConversationViews {
  const specialist = findSpecialist(harness, event.adapter);
  if (!specialist) return views;
  const line = renderSummaryLine(
    harness,
    event.adapter,
    replaceLoneSurrogates(event.text),
    specialist.summary.viewMaxBytes,
  );
  const isLatestTurn = views.turn?.turnId === event.turnId;
  return {
    ...views,
    views: views.views.map((view) => {
      if (view.adapter === harness.router.adapter) return view;
      const turn = view.turns.findLast((t) => t.turnId === event.turnId);
      if (!turn || turn.summarised) return view;
      const full = isLatestTurn && view.adapter !== event.adapter ? line : "";
      const { budgetBytes } = measureViewRoomBytes(view, harness);
      return appendToViewTurn(view, event.turnId, { full, compact: line, summarised: true }, budgetBytes);
    }),
  };
}
