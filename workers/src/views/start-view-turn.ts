import type { CompactionSettings } from "../../../schema/harness/harness-settings.ts";
import { countUtf8Bytes } from "../../../schema/harness/count-utf8-bytes.ts";
import { compactView } from "./compact-view.ts";
import type { ViewState } from "./conversation-views.ts";

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
