import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { ViewBudgetError, type ConversationViews } from "../../workers/src/views/conversation-views.ts";
import { renderAnswerPrompt } from "../../workers/src/views/render-prompts.ts";

/**
 * The answer prompt, or null where no answer hop could be sent: a repair's answer after the turn's budget is spent
 * (renderAnswerPrompt refuses it, so no such hop is sent and its prompt cannot break the prefix property).
 */
export function sendableAnswerPrompt(
  views: ConversationViews,
  adapter: string,
  harness: HarnessDocument,
): string | null {
  try {
    return renderAnswerPrompt(views, adapter, harness);
  } catch (error) {
    if (error instanceof ViewBudgetError) return null;
    throw error;
  }
}
