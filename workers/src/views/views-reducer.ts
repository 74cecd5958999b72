/**
 * The views as a pure reducer over timeline events: each event only appends at the end of the views it
 * reaches, and a turn's start is the one place a view compacts.
 */
import type { TimelineEvent, TimelineEventOf } from "../db/timeline-event.ts";
import {
  adapterLabel,
  DEFAULT_INTERIM_MAX_BYTES,
  findSpecialist,
  readSummaryWait,
  type HarnessDocument,
} from "../../../schema/harness/harness-settings.ts";
import { readMaxUserMessageBytes } from "../../../schema/harness/measure-view-room.ts";
import {
  renderAnswerLine,
  renderInterimLine,
  renderRouteLine,
  renderSummaryLine,
  renderSystemLine,
  renderUserLine,
} from "../../../schema/harness/render-view-lines.ts";
import { renderToolsBlock } from "../../../schema/harness/tools-block.ts";
import { clipMiddleWithMark, countUtf8Bytes, cleanConversationText } from "../../../schema/harness/utf8.ts";
import {
  createConversationViews,
  measureViewRoomBytes,
  type ConversationViews,
  type PendingContext,
  type TurnProgress,
  type ViewState,
} from "./conversation-views.ts";
import { appendToViewTurn, startViewTurn } from "./view-turns.ts";

/**
 * The views after one more timeline event. Pure: returns a new state and never mutates `views`. Events that
 * do not fit the turn order (a route or answer for a turn no longer in progress, a repeated one) change
 * nothing, so the result depends on the timeline alone. `summary_failed` appends nothing (and leaves its turn
 * no interim line).
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
    case "instructions":
      return { ...views, pending: { ...views.pending, instructions: event.text } };
    case "context_messages":
      return {
        ...views,
        pending: { ...views.pending, messages: [...(views.pending?.messages ?? []), ...event.messages] },
      };
    case "summary_failed":
      return applySummaryFailed(views, event.turnId);
    case "genui_validation":
    case "feedback":
    case "response_deleted":
    case "item_deleted":
      // Tombstones hide things from the API only: removing a line would rewrite the middle of the views. A GenUI
      // verdict and a user's feedback are for the API and the rollout guard, never shown to a specialist.
      return views;
    case "harness_changed":
      // The views are built under one harness; a change rebuilds them from the timeline (conversation-timeline.ts).
      return views;
    case "tools_changed":
      return applyToolsChanged(views, event, harness);
    case "step":
      return applyStepNote(views, event, harness);
  }
}

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

/**
 * A new turn: its user line goes into every view (the router's keeps at most `maxUserMessageChars`), after
 * the previous turn's interim line where that turn's summary has not landed (see {@link appendInterimLines}).
 * The API accepts messages far longer than a view holds (`MAX_MESSAGE_BYTES`); the views keep at most
 * `readMaxUserMessageBytes` of one, its head and tail around the clipped mark, while the timeline and the
 * items keep it whole. Pending instructions and earlier messages open the turn, each line clipped and
 * opened the way `renderChatMessagesPrompt` does it, so they pass the same room check (and compaction).
 */
function applyUserMessage(
  views: ConversationViews,
  event: TimelineEventOf<"user_message">,
  harness: HarnessDocument,
): ConversationViews {
  if (views.turn?.turnId === event.turnId) return views;
  const text = clipMessage(event.text, harness);
  const { pending, ...rest } = appendInterimLines(views, harness);
  return {
    ...rest,
    turn: { turnId: event.turnId, label: null, answeredBy: null, ended: false },
    views: rest.views.map((view) => openTurnInView(view, event.turnId, text, pending, harness)),
  };
}

/**
 * Under the `interim` summary wait, the next turn does not wait for the previous turn's summary, and once its
 * user line is in, a summary can only reach the compact forms. So where the previous (answered) turn is still
 * the last one of a view with no summary line in it, that view first gets the turn's interim line: the answer's
 * opening in the summary line's form, marked. It fits the turn's reserve (it is no longer than a summary line
 * from that specialist), and it is appended at the view's end, so every view still only grows there. The turn's
 * compact form takes it too, until the summary replaces it: the user line that follows may compact past the
 * turn, and a summary no longer reaches a turn the cut took. The answering specialist's own view holds the
 * answer and the router's holds no answers: neither gets one.
 */
function appendInterimLines(views: ConversationViews, harness: HarnessDocument): ConversationViews {
  const turn = views.turn;
  const line = turn?.interimLine;
  if (!turn || line === undefined) return views;
  return {
    ...views,
    views: views.views.map((view) => {
      const last = view.turns.at(-1);
      if (view.adapter === adapterLabel(harness.router.adapter) || view.adapter === turn.answeredBy)
        return view;
      if (last?.turnId !== turn.turnId || last.summarised) return view;
      return appendToViewTurn(
        view,
        turn.turnId,
        { full: line, interim: line },
        measureViewRoomBytes(view, harness).budgetBytes,
      );
    }),
  };
}

/**
 * Opens the turn in one view. The instructions' system line goes before the first line the turn adds; each
 * earlier user message opens a turn of its own (an assistant message with none before it gets an empty one)
 * and its assistant message follows in the turn's reserve, as in a chat-completions prompt. The router's
 * view, which never holds answers, gets only the user lines.
 */
function openTurnInView(
  view: ViewState,
  turnId: string,
  text: string,
  pending: PendingContext | undefined,
  harness: HarnessDocument,
): ViewState {
  const { router, compaction } = harness;
  const isRouter = view.adapter === adapterLabel(router.adapter);
  const fullChars = isRouter ? router.maxUserMessageChars : null;
  const compactChars = isRouter
    ? Math.min(router.maxUserMessageChars, compaction.compactUserMessageChars)
    : compaction.compactUserMessageChars;
  const { roomBytes, budgetBytes } = measureViewRoomBytes(view, harness);
  const answerMaxBytes = findSpecialist(harness, view.adapter)?.answerViewMaxBytes ?? 0;
  let opening =
    pending?.instructions === undefined
      ? ""
      : renderInstructionsLine(pending.instructions, roomBytes, harness);
  const open = (state: ViewState, id: string, line: { full: string; compact: string }): ViewState => {
    const opened = startViewTurn(state, id, { ...line, full: opening + line.full }, roomBytes, compaction);
    opening = "";
    return opened;
  };
  const userLines = (userText: string) => ({
    full: renderUserLine(harness, userText, fullChars),
    compact: renderUserLine(harness, userText, compactChars),
  });

  let state = view;
  let awaitingAnswer = false;
  (pending?.messages ?? []).forEach((message, index) => {
    const contextTurnId = `${turnId}/context/${index}`;
    if (message.role === "user") {
      state = open(state, contextTurnId, userLines(clipMessage(message.text, harness)));
      awaitingAnswer = true;
    } else if (!isRouter) {
      if (!awaitingAnswer) state = open(state, contextTurnId, { full: "", compact: "" });
      const line = renderAnswerLine(harness, cleanConversationText(message.text), answerMaxBytes);
      state = appendToViewTurn(
        state,
        state.turns.at(-1)?.turnId ?? contextTurnId,
        { full: line },
        budgetBytes,
      );
      awaitingAnswer = false;
    }
  });
  return open(state, turnId, userLines(text));
}

/** A client message as views keep it: clean, and at most `readMaxUserMessageBytes`, head and tail. */
function clipMessage(text: string, harness: HarnessDocument): string {
  return clipMiddleWithMark(
    cleanConversationText(text),
    readMaxUserMessageBytes(harness),
    harness.templates.clippedMark,
  );
}

/**
 * The instructions' system line, clipped like a chat-completions client system message: what the harness
 * check leaves spare next to the largest user line. None when not even an empty line fits there.
 */
function renderInstructionsLine(instructions: string, roomBytes: number, harness: HarnessDocument): string {
  const maxMessageBytes = readMaxUserMessageBytes(harness);
  const lineOverheadBytes = countUtf8Bytes(renderSystemLine(harness, ""));
  const userLineBytes = countUtf8Bytes(renderUserLine(harness, "", null)) + maxMessageBytes;
  const spareBytes = Math.min(maxMessageBytes, roomBytes - userLineBytes);
  if (spareBytes < lineOverheadBytes) return "";
  const text = clipMiddleWithMark(
    cleanConversationText(instructions),
    spareBytes - lineOverheadBytes,
    harness.templates.clippedMark,
  );
  return renderSystemLine(harness, text);
}

/** The route line goes to the router's view only, right after the route cue its prompt ended with. */
function applyRouteDecision(
  views: ConversationViews,
  event: TimelineEventOf<"route_decision">,
  harness: HarnessDocument,
): ConversationViews {
  const turn = readOpenTurn(views, event.turnId);
  if (!turn || turn.label !== null || turn.answeredBy !== null) return views;
  const label = cleanConversationText(event.label);
  const line = renderRouteLine(harness, label);
  return {
    ...views,
    turn: { ...turn, label },
    views: views.views.map((view) =>
      view.adapter === adapterLabel(harness.router.adapter)
        ? appendToViewTurn(
            view,
            turn.turnId,
            { full: line, compact: line },
            measureViewRoomBytes(view, harness).budgetBytes,
          )
        : view,
    ),
  };
}

/** The answer goes to the answering specialist's view only; its compact form is the summary, added later. */
function applyAnswer(
  views: ConversationViews,
  event: TimelineEventOf<"answer">,
  harness: HarnessDocument,
): ConversationViews {
  const turn = readOpenTurn(views, event.turnId);
  // Views are per label: an answer by any revision of a specialist lands in its view.
  const label = adapterLabel(event.adapter);
  const specialist = findSpecialist(harness, label);
  // A revised answer follows the turn's first one, in the same specialist's view; a repeated answer changes nothing.
  const expected = event.revises === true ? label : null;
  if (!turn || turn.answeredBy !== expected || !specialist) return views;
  const text = cleanConversationText(event.text);
  const line = renderAnswerLine(harness, text, specialist.answerViewMaxBytes);
  const wait = readSummaryWait(harness);
  // Rendered now, so the state keeps a few bytes of the answer rather than all of it.
  const interim =
    wait.mode === "interim"
      ? renderInterimLine(
          harness,
          label,
          text,
          Math.min(wait.interimMaxBytes ?? DEFAULT_INTERIM_MAX_BYTES, specialist.summary.viewMaxBytes),
        )
      : undefined;
  return {
    ...views,
    turn: { ...turn, answeredBy: label, ...(interim === undefined ? {} : { interimLine: interim }) },
    views: views.views.map((view) =>
      view.adapter === label
        ? appendToViewTurn(view, turn.turnId, { full: line }, measureViewRoomBytes(view, harness).budgetBytes)
        : view,
    ),
  };
}

/**
 * New tools: the block goes at the end of every specialist's view (the router picks labels, not tools), in
 * full and in the turn's compact form, so it survives the turn's compaction.
 */
function applyToolsChanged(
  views: ConversationViews,
  event: TimelineEventOf<"tools_changed">,
  harness: HarnessDocument,
): ConversationViews {
  const turn = readOpenTurn(views, event.turnId);
  if (!turn) return views;
  const line = renderToolsBlock(harness, event.tools);
  return {
    ...views,
    views: views.views.map((view) => {
      if (view.adapter === adapterLabel(harness.router.adapter)) return view;
      // Clipped to leave the turn's reserve free: the answer line must still fit, or the answer prompt
      // would stop being a prefix of the view. Refusing a tool set too large for the view is the API's job.
      const { roomBytes } = measureViewRoomBytes(view, harness);
      const limitBytes = roomBytes + countUtf8Bytes(view.header);
      return appendToViewTurn(view, turn.turnId, { full: line, compact: line }, limitBytes);
    }),
  };
}

/** A failed or cancelled turn appends nothing: its user line stays, and the next turn follows it. */
function applyTurnEnd(views: ConversationViews, turnId: string): ConversationViews {
  const turn = readOpenTurn(views, turnId);
  return turn ? { ...views, turn: { ...turn, ended: true } } : views;
}

/** A failed summary leaves its turn no interim line: the other views show nothing of it, as ever. */
function applySummaryFailed(views: ConversationViews, turnId: string): ConversationViews {
  const turn = views.turn;
  if (turn?.turnId !== turnId || turn.interimLine === undefined) return views;
  const { interimLine: _dropped, ...rest } = turn;
  return { ...views, turn: rest };
}

/** The turn in progress, if the event belongs to it and it has not ended. */
/**
 * A step's note goes to the view of the turn's specialist, as a user line after what the turn holds so far (its
 * answer, when it has one): the feedback a next answer of the turn is written from. Only in full: the turn's
 * compact form keeps its user line and summary, as for any turn. Clipped like a user message.
 */
function applyStepNote(
  views: ConversationViews,
  event: TimelineEventOf<"step">,
  harness: HarnessDocument,
): ConversationViews {
  const turn = readOpenTurn(views, event.turnId);
  if (!turn || turn.label === null || event.note === undefined) return views;
  const label = adapterLabel(turn.answeredBy ?? turn.label);
  const line = renderUserLine(harness, clipMessage(event.note, harness), null);
  return {
    ...views,
    views: views.views.map((view) =>
      view.adapter === label
        ? appendToViewTurn(view, turn.turnId, { full: line }, measureViewRoomBytes(view, harness).budgetBytes)
        : view,
    ),
  };
}

function readOpenTurn(views: ConversationViews, turnId: string): TurnProgress | null {
  const turn = views.turn;
  return turn && turn.turnId === turnId && !turn.ended ? turn : null;
}

/**
 * The summary line goes to every OTHER specialist's view (a specialist sees its own turns in full), and into
 * every specialist's compact form of the turn. A summary that arrives after the next turn has started can no
 * longer be appended (that would rewrite the middle of the views; under the `interim` summary wait those views
 * hold the turn's interim line instead); it still reaches the compact forms of turns still held in full, where
 * it replaces the interim line. A turn the cut already took keeps the interim line its compact form had.
 */
function applySummary(
  views: ConversationViews,
  event: TimelineEventOf<"summary">,
  harness: HarnessDocument,
): ConversationViews {
  const label = adapterLabel(event.adapter);
  const specialist = findSpecialist(harness, label);
  if (!specialist) return views;
  const line = renderSummaryLine(
    harness,
    label,
    cleanConversationText(event.text),
    specialist.summary.viewMaxBytes,
  );
  const isLatestTurn = views.turn?.turnId === event.turnId;
  return {
    ...views,
    views: views.views.map((view) => {
      if (view.adapter === adapterLabel(harness.router.adapter)) return view;
      const turn = view.turns.findLast((t) => t.turnId === event.turnId);
      if (!turn || turn.summarised) return view;
      const full = isLatestTurn && view.adapter !== label ? line : "";
      const { budgetBytes } = measureViewRoomBytes(view, harness);
      return appendToViewTurn(view, event.turnId, { full, compact: line, summarised: true }, budgetBytes);
    }),
  };
}
