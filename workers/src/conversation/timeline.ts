import type { StoredTimelineEvent, TimelineEvent } from "../db/timeline-event.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import type { ViewTool } from "../../../schema/harness/tools-block.ts";
import { renderChatMessagesPrompt } from "../views/render-prompts.ts";

/**
 * What the turn loop needs of a conversation's timeline: appending a turn's events, reading them back, and the
 * prompts each hop sends, rendered from the timeline as it stands (so the answer's prompt already holds the route
 * decision, the summary's the answer). Stored conversations keep it in SQLite with incremental views
 * ({@link ConversationTimeline}); a stateless turn keeps it in memory ({@link createMessagesTimeline}).
 */
export interface Timeline {
  append(...events: TimelineEvent[]): StoredTimelineEvent[];
  readTurn(turnId: string): StoredTimelineEvent[];
  /**
   * The route prompt; with `next`, as it will be once those events (a turn's opening and user message) are
   * appended (the router's view holds no summaries, so it is the same whether or not the previous turn's summary
   * lands first).
   */
  routePrompt(next?: readonly TimelineEvent[]): string;
  answerPrompt(label: string): string;
  /** Absent where summaries are not kept (a stateless turn has no later turn to read them). */
  summaryPrompt?(label: string): string;
  /** The specialist that answered the most recent answered turn, if any: the route's fallback. */
  lastAnsweredLabel(): string | undefined;
  /** The node that last served `adapter` in this conversation (its KV is warm there). */
  lastNodeFor(adapter: string): string | undefined;
  /**
   * The tools the views show now (the last `tools_changed`); the turn loop appends a new one when the turn's
   * differ. Absent where the prompt shows the request's tools itself (a stateless turn).
   */
  shownTools?(): ViewTool[] | undefined;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * The timeline of one stateless turn (`/v1/chat/completions`): the client sends the whole history, so prompts
 * come from its messages and the events live only as long as the turn. Nothing is known of earlier turns.
 */
export function createMessagesTimeline(
  messages: readonly ChatMessage[],
  harness: HarnessDocument,
  now: () => number,
  tools: readonly ViewTool[] = [],
): Timeline {
  const events: StoredTimelineEvent[] = [];
  return {
    append(...added) {
      const stored = added.map((event, i): StoredTimelineEvent => ({
        ...event,
        seq: events.length + i + 1,
        createdAt: now(),
      }));
      events.push(...stored);
      return stored;
    },
    readTurn: (turnId) => events.filter((event) => event.turnId === turnId),
    routePrompt: () => renderChatMessagesPrompt(messages, "router", harness),
    answerPrompt: (label) => renderChatMessagesPrompt(messages, label, harness, tools),
    lastAnsweredLabel: () => undefined,
    lastNodeFor: () => undefined,
  };
}
