import {
  adapterLabel,
  findSpecialist,
  type HarnessDocument,
} from "../../../schema/harness/harness-settings.ts";
import { measureViewRoom, readMaxUserMessageBytes } from "../../../schema/harness/measure-view-room.ts";
import {
  renderAnswerLine,
  renderRouterHeader,
  renderSummarySuffix,
  renderSystemLine,
  renderUserLine,
} from "../../../schema/harness/render-view-lines.ts";
import { renderToolsBlock, type ViewTool } from "../../../schema/harness/tools-block.ts";
import { clipMiddleWithMark, cleanConversationText, countUtf8Bytes } from "../../../schema/harness/utf8.ts";
import {
  ViewBudgetError,
  findView,
  createViewState,
  joinView,
  measureViewRoomBytes,
  readViewText,
  type ConversationViews,
  type ViewState,
} from "./conversation-views.ts";
import { appendToViewTurn, startViewTurn } from "./view-turns.ts";

/** The route hop's prompt: the router's view + the route cue; the route line will start with that cue. */
export function renderRoutePrompt(views: ConversationViews, harness: HarnessDocument): string {
  return readViewText(views, harness.router.adapter) + harness.templates.routeCue;
}

/**
 * The answer hop's prompt: the specialist's view + the assistant cue; the answer line will start with it. The
 * hop adds the specialist's `answerPrefix`, if any, after it (the stored answer starts with that prefix).
 */
export function renderAnswerPrompt(
  views: ConversationViews,
  label: string,
  harness: HarnessDocument,
): string {
  const view = findView(views, label);
  const text = joinView(view);
  // A first answer always fits the turn's reserve. Another answer of the same turn (a repair's) needs room left in
  // the budget for its cue and prefix at least: else its line would be clipped inside them, and the prompt would no
  // longer be a prefix of the view the answer leaves.
  const neededBytes = countUtf8Bytes(
    harness.templates.assistantCue + (findSpecialist(harness, adapterLabel(label))?.answerPrefix ?? ""),
  );
  const leftBytes = measureViewRoomBytes(view, harness).budgetBytes - countUtf8Bytes(text);
  if (leftBytes < neededBytes) {
    throw new ViewBudgetError(
      `the turn in progress has no room left in adapter "${view.adapter}"'s view for another answer`,
    );
  }
  return text + harness.templates.assistantCue;
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

export interface ChatPromptMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * The prompt of a stateless `/v1/chat/completions` hop: the harness system line, then the client's system
 * messages, then the conversation in the same templates and with the same incremental compaction as a
 * stored conversation, so a client resending a growing history keeps a stable prefix (and a warm KV cache).
 * `target` "router" renders the route prompt (user lines only, as the router's view has no answers); a
 * specialist label renders its answer prompt. Every message is clipped the way a stored conversation clips a
 * user message (head and tail around the clipped mark): the client system messages share
 * `readMaxUserMessageBytes` between them, a user message gets all of it, an assistant message the specialist's
 * `answerViewMaxBytes`. Throws ViewBudgetError only when so many system messages are sent that their lines
 * alone pass the budget (a caller error). `tools` (a specialist's prompt only) go in as the tools block right
 * after the first user message: a client resending a growing history with the same tools keeps one prefix.
 */
export function renderChatMessagesPrompt(
  messages: readonly ChatPromptMessage[],
  /** `"router"` or a specialist's label. */
  target: string,
  harness: HarnessDocument,
  tools: readonly ViewTool[] = [],
): string {
  const { router, templates, compaction } = harness;
  const routerLabel = adapterLabel(router.adapter);
  const isRouter = target === "router" || adapterLabel(target) === routerLabel;
  const adapter = isRouter ? routerLabel : adapterLabel(target);
  const systemPrompt = isRouter ? router.systemPrompt : findSpecialist(harness, adapter)?.systemPrompt;
  if (systemPrompt === undefined) throw new RangeError(`the harness has no specialist "${target}"`);
  const answerMaxBytes = findSpecialist(harness, adapter)?.answerViewMaxBytes ?? 0;
  const maxMessageBytes = readMaxUserMessageBytes(harness);
  const systemMessages = messages.filter((m) => m.role === "system");
  // What the harness check leaves spare next to the largest user line; the system lines share it.
  const lineOverheadBytes = countUtf8Bytes(renderSystemLine(harness, ""));
  const userLineBytes = countUtf8Bytes(renderUserLine(harness, "", null)) + maxMessageBytes;
  const spareBytes = Math.min(maxMessageBytes, measureViewRoom(harness, adapter).roomBytes - userLineBytes);
  const systemShareBytes = Math.max(
    0,
    Math.floor(spareBytes / Math.max(1, systemMessages.length)) - lineOverheadBytes,
  );
  const clientSystem = systemMessages.map((m) =>
    renderSystemLine(harness, clipMiddleWithMark(clean(m.content), systemShareBytes, templates.clippedMark)),
  );
  const header = isRouter ? renderRouterHeader(harness) : renderSystemLine(harness, systemPrompt);
  let view: ViewState = createViewState(adapter, header + clientSystem.join(""));
  const { roomBytes, budgetBytes } = measureViewRoomBytes(view, harness);
  if (roomBytes < 0) throw new ViewBudgetError(`the system messages pass adapter "${adapter}"'s budget`);

  const userChars = isRouter ? router.maxUserMessageChars : null;
  const compactChars = Math.min(userChars ?? Infinity, compaction.compactUserMessageChars);
  let awaitingAnswer = false;
  let toolsShown = false;
  messages.forEach((message, index) => {
    const turnId = `m${index}`;
    if (message.role === "user") {
      const text = clipMiddleWithMark(clean(message.content), maxMessageBytes, templates.clippedMark);
      const lines = {
        full: renderUserLine(harness, text, userChars),
        compact: renderUserLine(harness, text, compactChars),
      };
      view = startViewTurn(view, turnId, lines, roomBytes, compaction);
      awaitingAnswer = true;
      if (!isRouter && tools.length > 0 && !toolsShown) {
        const block = renderToolsBlock(harness, tools);
        // Clipped as the reducer clips it, leaving the turn's reserve to the answer.
        const limitBytes = measureViewRoomBytes(view, harness).roomBytes + countUtf8Bytes(view.header);
        view = appendToViewTurn(view, turnId, { full: block, compact: block }, limitBytes);
        toolsShown = true;
      }
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
  return cleanConversationText(text);
}
