import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { countUtf8Bytes } from "../../../schema/harness/count-utf8-bytes.ts";
import { measureViewRoom } from "../../../schema/harness/measure-view-room.ts";
import type { ViewState } from "./conversation-views.ts";

/** The harness's room for this adapter, measured against the view's actual header (it may hold client system lines). */
export function measureViewRoomBytes(
  view: ViewState,
  harness: HarnessDocument,
): { roomBytes: number; budgetBytes: number } {
  const { budgetBytes, reserveBytes } = measureViewRoom(harness, view.adapter);
  return { budgetBytes, roomBytes: budgetBytes - reserveBytes - countUtf8Bytes(view.header) };
}
