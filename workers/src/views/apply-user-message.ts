import type { TimelineEventOf } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { clipWithMark } from "../../../schema/harness/clip-with-mark.ts";
import { readMaxUserMessageBytes } from "../../../schema/harness/read-max-user-message-bytes.ts";
import { renderUserLine } from "../../../schema/harness/render-view-lines.ts";
import { replaceLoneSurrogates } from "../../../schema/harness/replace-lone-surrogates.ts";
import type { ConversationViews } from "./conversation-views.ts";
import { measureViewRoomBytes } from "./measure-view-room-bytes.ts";
import { startViewTurn } from "./start-view-turn.ts";

/**
 * A new turn: its user line goes into every view (the router's keeps at most `maxUserMessageChars`).
 * A message over `readMaxUserMessageBytes` should have been refused by the API; if one is in the timeline
 * anyway, the views clip it, so a stored timeline can never make the conversation unusable.
 */
export function applyUserMessage(
  views: ConversationViews,
  event: TimelineEventOf<"user_message">,
  harness: HarnessDocument,
): ConversationViews {
  if (views.turn?.turnId === event.turnId) return views;
  const { router, compaction, templates } = harness;
  const text = clipWithMark(
    replaceLoneSurrogates(event.text),
    readMaxUserMessageBytes(harness),
    templates.clippedMark,
  );
  return {
    ...views,
    turn: { turnId: event.turnId, label: null, answeredBy: null, ended: false },
    views: views.views.map((view) => {
      const isRouter = view.adapter === router.adapter;
      const fullChars = isRouter ? router.maxUserMessageChars : null;
      const compactChars = isRouter
        ? Math.min(router.maxUserMessageChars, compaction.compactUserMessageChars)
        : compaction.compactUserMessageChars;
      const lines = {
        full: renderUserLine(harness, text, fullChars),
        compact: renderUserLine(harness, text, compactChars),
      };
      return startViewTurn(
        view,
        event.turnId,
        lines,
        measureViewRoomBytes(view, harness).roomBytes,
        compaction,
      );
    }),
  };
}
