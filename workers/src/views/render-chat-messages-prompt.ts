import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { clipWithMark } from "../../../schema/harness/clip-with-mark.ts";
import { findSpecialist } from "../../../schema/harness/find-specialist.ts";
import { readMaxUserMessageBytes } from "../../../schema/harness/read-max-user-message-bytes.ts";
import {
  renderAnswerLine,
  renderSystemLine,
  renderUserLine,
} from "../../../schema/harness/render-view-lines.ts";
import { replaceLoneSurrogates } from "../../../schema/harness/replace-lone-surrogates.ts";
import { appendToViewTurn } from "./append-to-view-turn.ts";
import type { ViewState } from "./conversation-views.ts";
import { createViewState } from "./create-conversation-views.ts";
import { measureViewRoomBytes } from "./measure-view-room-bytes.ts";
import { joinView } from "./read-view-text.ts";
import { startViewTurn } from "./start-view-turn.ts";
import { ViewBudgetError } from "./view-budget-error.ts";

export interface ChatPromptMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * The prompt of a stateless `/v1/chat/completions` hop: the harness system line, then the client's system
 * messages, then the conversation in the same templates and with the same incremental compaction as a
 * stored conversation, so a client resending a growing history keeps a stable prefix (and a warm KV cache).
 * `target` "router" renders the route prompt (user lines only, as the router's view has no answers); a
 * specialist label renders its answer prompt. Throws ViewBudgetError when the system messages or the last
 * message cannot fit the budget (a caller error).
 */
export function renderChatMessagesPrompt(
  messages: readonly ChatPromptMessage[],
  target: "router" | string,
  harness: HarnessDocument,
): string {
  const { router, templates, compaction } = harness;
  const isRouter = target === "router" || target === router.adapter;
  const adapter = isRouter ? router.adapter : target;
  const systemPrompt = isRouter ? router.systemPrompt : findSpecialist(harness, target)?.systemPrompt;
  if (systemPrompt === undefined) throw new RangeError(`the harness has no specialist "${target}"`);
  const answerMaxBytes = findSpecialist(harness, adapter)?.answerViewMaxBytes ?? 0;
  const clientSystem = messages
    .filter((m) => m.role === "system")
    .map((m) => renderSystemLine(harness, clean(m.content)));
  let view: ViewState = createViewState(
    adapter,
    renderSystemLine(harness, systemPrompt) + clientSystem.join(""),
  );
  const { roomBytes, budgetBytes } = measureViewRoomBytes(view, harness);
  if (roomBytes < 0) throw new ViewBudgetError(`the system messages pass adapter "${adapter}"'s budget`);

  const userChars = isRouter ? router.maxUserMessageChars : null;
  const compactChars = Math.min(userChars ?? Infinity, compaction.compactUserMessageChars);
  let awaitingAnswer = false;
  messages.forEach((message, index) => {
    const turnId = `m${index}`;
    if (message.role === "user") {
      const text = clipWithMark(
        clean(message.content),
        readMaxUserMessageBytes(harness),
        templates.clippedMark,
      );
      const lines = {
        full: renderUserLine(harness, text, userChars),
        compact: renderUserLine(harness, text, compactChars),
      };
      view = startViewTurn(view, turnId, lines, roomBytes, compaction);
      awaitingAnswer = true;
    } else if (message.role === "assistant" && !isRouter) {
      // An assistant message with no user message before it gets a turn of its own.
      if (!awaitingAnswer)
        view = startViewTurn(view, turnId, { full: "", compact: "" }, roomBytes, compaction);
      const line = renderAnswerLine(harness, clean(message.content), answerMaxBytes);
      view = appendToViewTurn(view, view.turns.at(-1)?.turnId ?? turnId, { full: line }, budgetBytes);
      awaitingAnswer = false;
    }
  });
  return joinView(view) + (isRouter ? templates.routeCue : templates.assistantCue);
}

function clean(text: string): string {
  return replaceLoneSurrogates(text);
}
