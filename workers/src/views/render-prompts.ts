import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { findSpecialist } from "../../../schema/harness/find-specialist.ts";
import { renderSummarySuffix } from "../../../schema/harness/render-view-lines.ts";
import type { ConversationViews } from "./conversation-views.ts";
import { readViewText } from "./read-view-text.ts";

/** The route hop's prompt: the router's view + the route cue; the route line will start with that cue. */
export function renderRoutePrompt(views: ConversationViews, harness: HarnessDocument): string {
  return readViewText(views, harness.router.adapter) + harness.templates.routeCue;
}

/** The answer hop's prompt: the specialist's view + the assistant cue; the answer line will start with it. */
export function renderAnswerPrompt(
  views: ConversationViews,
  label: string,
  harness: HarnessDocument,
): string {
  return readViewText(views, label) + harness.templates.assistantCue;
}

/** The summary hop's prompt: the specialist's view (now ending with its answer) + the summary instruction. */
export function renderSummaryPrompt(
  views: ConversationViews,
  label: string,
  harness: HarnessDocument,
): string {
  const specialist = findSpecialist(harness, label);
  if (!specialist) throw new RangeError(`the harness has no specialist "${label}"`);
  return readViewText(views, label) + renderSummarySuffix(harness, specialist.summary.instruction);
}
