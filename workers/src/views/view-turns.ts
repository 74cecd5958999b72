/**
 * The two ways a view changes: a turn opens (the one place a view compacts) or a turn grows at its end. The
 * reducer and the stateless prompt rendering both build views from these, so both keep the prefix property.
 */
import type { CompactionSettings } from "../../../schema/harness/harness-settings.ts";
import { clipUtf8Bytes, countUtf8Bytes } from "../../../schema/harness/utf8.ts";
import { ViewBudgetError, joinView, type ViewState, type ViewTurn } from "./conversation-views.ts";

/**
 * Opens a turn in one view with its first line. Compaction happens here and only here: `roomBytes` already
 * keeps the turn's later lines' worst case free, so the turn's own hops never move the prefix.
 */
export function startViewTurn(
  view: ViewState,
  turnId: string,
  lines: { full: string; compact: string },
  roomBytes: number,
  compaction: CompactionSettings,
): ViewState {
  const opened: ViewState = { ...view, turns: [...view.turns, { turnId, ...lines, summarised: false }] };
  const usedBytes =
    countUtf8Bytes(opened.compacted.join("")) +
    countUtf8Bytes(opened.turns.map((turn) => turn.full).join(""));
  return usedBytes <= roomBytes ? opened : compactView(opened, roomBytes, compaction);
}

/** What to add to one turn of one view. */
export interface TurnAppend {
  /** Appended to the turn's full text (only ever to the turn in progress). */
  full?: string;
  /** Appended to the turn's compact form. */
  compact?: string;
  /** The turn's interim line, for its compact form until a summary lands (see {@link ViewTurn.interim}). */
  interim?: string;
  /** A summary line is in `compact`: it replaces the interim line there. */
  summarised?: boolean;
}

/**
 * Appends to the turn `turnId` of a view, if the view still holds it in full. Full text goes to the last turn
 * only (anything else would rewrite the middle of the view, not its end), and is clipped to
 * what is left of the budget: the turn's reserve makes that a no-op for a valid harness and well-formed
 * timeline, and it keeps the budget a hard bound when they are not.
 */
export function appendToViewTurn(
  view: ViewState,
  turnId: string,
  add: TurnAppend,
  budgetBytes: number,
): ViewState {
  const index = view.turns.findLastIndex((turn) => turn.turnId === turnId);
  const turn = view.turns[index];
  if (!turn) return view;
  const leftBytes = Math.max(0, budgetBytes - countUtf8Bytes(joinView(view)));
  const { interim: heldInterim, ...held } = turn;
  const summarised = turn.summarised || (add.summarised ?? false);
  const interim = summarised ? undefined : (add.interim ?? heldInterim);
  const updated: ViewTurn = {
    ...held,
    full: index === view.turns.length - 1 ? turn.full + clipUtf8Bytes(add.full ?? "", leftBytes) : turn.full,
    compact: turn.compact + (add.compact ?? ""),
    summarised,
    // Omitted rather than undefined, so a JSON round trip keeps the state equal.
    ...(interim === undefined ? {} : { interim }),
  };
  return { ...view, turns: view.turns.map((t, i) => (i === index ? updated : t)) };
}

/**
 * Shrinks a view whose compact forms and full turns no longer fit `roomBytes`, in large steps so the
 * view's prefix (and the engine's KV cache for it) then stays stable for many turns:
 * 1. the cut jumps forward, turning the oldest full turns into their compact forms, until the full turns
 *    take at most `keepFullFraction` of the room; the last turn (in progress) always stays in full;
 * 2. if the compact forms now pass `compactMaxFraction`, the oldest are dropped down to `compactKeepFraction`;
 * 3. if it still does not fit (a very large turn in progress), older compact forms go until it does.
 */
function compactView(view: ViewState, roomBytes: number, compaction: CompactionSettings): ViewState {
  const turns = [...view.turns];
  const compacted = [...view.compacted];
  const compactSizes = compacted.map(countUtf8Bytes);
  let fullBytes = sum(turns.map((turn) => countUtf8Bytes(turn.full)));
  let compactBytes = sum(compactSizes);

  while (turns.length > 1 && fullBytes > compaction.keepFullFraction * roomBytes) {
    const oldest = turns.shift();
    if (!oldest) break;
    fullBytes -= countUtf8Bytes(oldest.full);
    const form = oldest.compact + (oldest.interim ?? "");
    compacted.push(form);
    compactSizes.push(countUtf8Bytes(form));
    compactBytes += compactSizes.at(-1) ?? 0;
  }
  const dropTo =
    compactBytes > compaction.compactMaxFraction * roomBytes
      ? compaction.compactKeepFraction * roomBytes
      : Infinity;
  let dropped = 0;
  while (dropped < compacted.length && (compactBytes > dropTo || compactBytes + fullBytes > roomBytes)) {
    compactBytes -= compactSizes[dropped] ?? 0;
    dropped += 1;
  }
  if (compactBytes + fullBytes > roomBytes) {
    throw new ViewBudgetError(
      `the turn in progress needs ${fullBytes} bytes but adapter "${view.adapter}" has ${roomBytes}; ` +
        "check the harness with harnessDocumentSchema",
    );
  }
  return { ...view, compacted: compacted.slice(dropped), turns };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
