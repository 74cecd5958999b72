import type { TimelineEvent } from "../../../schema/db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { applyEventToViews } from "./apply-event-to-views.ts";
import type { ConversationViews } from "./conversation-views.ts";
import { createConversationViews } from "./create-conversation-views.ts";

/** The views of a whole timeline; equal to applying its events one by one. */
export function buildConversationViews(
  events: readonly TimelineEvent[],
  harness: HarnessDocument,
): ConversationViews {
  return events.reduce(
    (views, event) => applyEventToViews(views, event, harness),
    createConversationViews(harness),
  );
}
