import type { CompactionSettings } from "../../../schema/harness/harness-settings.ts";
import { countUtf8Bytes } from "../../../schema/harness/count-utf8-bytes.ts";
import type { ViewState } from "./conversation-views.ts";
import { ViewBudgetError } from "./view-budget-error.ts";

/**
 * Shrinks a view whose compact forms and full turns no longer fit `roomBytes`, in large steps so the
 * view's prefix (and the engine's KV cache for it) then stays stable for many turns:
 * 1. the cut jumps forward, turning the oldest full turns into their compact forms, until the full turns
 *    take at most `keepFullFraction` of the room; the last turn (in progress) always stays in full;
 * 2. if the compact forms now pass `compactMaxFraction`, the oldest are dropped down to `compactKeepFraction`;
 * 3. if it still does not fit (a very large turn in progress), older compact forms go until it does.
 */
export function compactView(view: ViewState, roomBytes: number, compaction: CompactionSettings): ViewState {
  const turns = [...view.turns];
  const compacted = [...view.compacted];
  const compactSizes = compacted.map(countUtf8Bytes);
  let fullBytes = sum(turns.map((turn) => countUtf8Bytes(turn.full)));
  let compactBytes = sum(compactSizes);

  while (turns.length > 1 && fullBytes > compaction.keepFullFraction * roomBytes) {
    const oldest = turns.shift();
    if (!oldest) break;
    fullBytes -= countUtf8Bytes(oldest.full);
    compacted.push(oldest.compact);
    compactSizes.push(countUtf8Bytes(oldest.compact));
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
