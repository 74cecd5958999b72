import { clipUtf8Bytes } from "../../../schema/harness/clip-utf8-bytes.ts";
import { countUtf8Bytes } from "../../../schema/harness/count-utf8-bytes.ts";
import type { ViewState, ViewTurn } from "./conversation-views.ts";
import { joinView } from "./read-view-text.ts";

/** What to add to one turn of one view. */
export interface TurnAppend {
  /** Appended to the turn's full text (only ever to the turn in progress). */
  full?: string;
  /** Appended to the turn's compact form. */
  compact?: string;
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
  const updated: ViewTurn = {
    ...turn,
    full: index === view.turns.length - 1 ? turn.full + clipUtf8Bytes(add.full ?? "", leftBytes) : turn.full,
    compact: turn.compact + (add.compact ?? ""),
    summarised: turn.summarised || (add.summarised ?? false),
  };
  return { ...view, turns: view.turns.map((t, i) => (i === index ? updated : t)) };
}
