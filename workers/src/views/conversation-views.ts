import {
  adapterLabel,
  findSpecialist,
  type HarnessDocument,
} from "../../../schema/harness/harness-settings.ts";
import { measureViewRoom } from "../../../schema/harness/measure-view-room.ts";
import { renderRouterHeader, renderSystemLine } from "../../../schema/harness/render-view-lines.ts";
import { countUtf8Bytes } from "../../../schema/harness/utf8.ts";

/** Format tag of the stored state; a change of shape or rendering gets a new one (and a rebuild). */
export const VIEWS_FORMAT = "molmesh.views.v3" as const;

/** One turn as one adapter's view shows it. */
export interface ViewTurn {
  turnId: string;
  /** The turn in full, as the view shows it now; it only grows at its end. */
  full: string;
  /** What the turn shrinks to when a compaction cuts past it (followed by `interim`, if any). */
  compact: string;
  /** A summary line is already in `compact` (a second summary event is ignored). */
  summarised: boolean;
  /**
   * The interim line the full text got (the `interim` summary wait), held apart from `compact` so the summary,
   * if it lands before the cut, replaces it there: a cut then shows one of the two, never both. Absent otherwise.
   */
  interim?: string;
}

/** One adapter's view: `header + compacted.join("") + turns[].full.join("")`. */
export interface ViewState {
  adapter: string;
  /** The adapter's system line (plus, for chat completions, the client's system lines). */
  header: string;
  /** Compact forms of the turns before the cut, oldest first. */
  compacted: string[];
  /** The turns after the cut, in full, the one in progress last. */
  turns: ViewTurn[];
}

/** Where the latest turn stands, so out-of-order or repeated events change nothing. */
export interface TurnProgress {
  turnId: string;
  label: string | null;
  answeredBy: string | null;
  /** turn_failed or turn_cancelled arrived. */
  ended: boolean;
  /**
   * The answered turn's interim line (the `interim` summary wait), for the other specialists' views whose turn
   * has no summary line when the next user line comes; absent otherwise.
   */
  interimLine?: string;
}

/**
 * Every adapter's view of one conversation: plain JSON (arrays, strings, booleans, null; no Maps, no
 * undefined), so the Durable Object can store it and a JSON round trip changes nothing.
 */
export interface ConversationViews {
  format: typeof VIEWS_FORMAT;
  turn: TurnProgress | null;
  /**
   * Instructions and earlier messages waiting for the next user message, whose turn opens with them; absent
   * when none (never undefined, so a JSON round trip keeps the state equal).
   */
  pending?: PendingContext;
  /** The router's view first, then one per specialist in `router.labels` order. */
  views: ViewState[];
}

export interface PendingContext {
  instructions?: string;
  messages?: Array<{ role: "user" | "assistant"; text: string }>;
}

/** The content cannot fit an adapter's budget however it is compacted: a caller error (HTTP 400). */
export class ViewBudgetError extends RangeError {
  override readonly name = "ViewBudgetError";
}

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
    views: [createViewState(adapterLabel(router.adapter), renderRouterHeader(harness)), ...specialists],
  };
}

export function createViewState(adapter: string, header: string): ViewState {
  return { adapter, header, compacted: [], turns: [] };
}

/** The exact prompt text an adapter's view holds now. */
export function readViewText(views: ConversationViews, adapter: string): string {
  return joinView(findView(views, adapter));
}

/** Views are per label: every revision of an adapter (`label@<rev>`) reads the same view. */
export function findView(views: ConversationViews, adapter: string): ViewState {
  const label = adapterLabel(adapter);
  const view = views.views.find((v) => v.adapter === label);
  if (!view) throw new RangeError(`no view for adapter "${adapter}"`);
  return view;
}

export function joinView(view: ViewState): string {
  return view.header + view.compacted.join("") + view.turns.map((turn) => turn.full).join("");
}

/** The harness's room for this adapter, measured against the view's actual header (it may hold client system lines). */
export function measureViewRoomBytes(
  view: ViewState,
  harness: HarnessDocument,
): { roomBytes: number; budgetBytes: number } {
  const { budgetBytes, reserveBytes } = measureViewRoom(harness, view.adapter);
  return { budgetBytes, roomBytes: budgetBytes - reserveBytes - countUtf8Bytes(view.header) };
}
