import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { findSpecialist } from "../../../schema/harness/find-specialist.ts";
import { renderSystemLine } from "../../../schema/harness/render-view-lines.ts";
import { VIEWS_FORMAT, type ConversationViews, type ViewState } from "./conversation-views.ts";

/** The views of a conversation with no turn yet: each adapter's system line. */
export function createConversationViews(harness: HarnessDocument): ConversationViews {
  const { router } = harness;
  const specialists = router.labels.map((label) => {
    const specialist = findSpecialist(harness, label);
    if (!specialist) throw new RangeError(`the harness has no specialist "${label}"`);
    return createViewState(label, renderSystemLine(harness, specialist.systemPrompt));
  });
  return {
    format: VIEWS_FORMAT,
    turn: null,
    views: [createViewState(router.adapter, renderSystemLine(harness, router.systemPrompt)), ...specialists],
  };
}

export function createViewState(adapter: string, header: string): ViewState {
  return { adapter, header, compacted: [], turns: [] };
}
