import { adapterLabel, findSpecialist, type HarnessDocument } from "./harness-settings.ts";
import { renderRouterHeader, renderSystemLine } from "./render-view-lines.ts";
import { countUtf8Bytes } from "./utf8.ts";

/** A user message may take at most this share of the smallest specialist budget. */
export const MAX_USER_MESSAGE_BUDGET_SHARE = 0.25;

/** How one adapter's byte budget splits up. */
export interface ViewRoom {
  budgetBytes: number;
  /** The system line every view of this adapter starts with. */
  headerBytes: number;
  /**
   * What a turn may still append after its user line: the route line (router), or the answer or another
   * specialist's summary line (specialist). Kept free when the turn starts, so the turn's own hops never
   * need a compaction and every hop prompt stays a prefix of the next view.
   */
  reserveBytes: number;
  /** budget - header - reserve: what the compact forms and the full turns (the new user line included) share. */
  roomBytes: number;
}

/**
 * The largest user message (UTF-8 bytes) the harness accepts; the API answers 400 above it. The harness
 * check guarantees a message this large fits every view next to the header and the turn's reserve.
 */
export function readMaxUserMessageBytes(harness: HarnessDocument): number {
  const budgets = Object.values(harness.specialists).map((s) => s.viewBudgetBytes);
  return Math.floor(Math.min(...budgets) * MAX_USER_MESSAGE_BUDGET_SHARE);
}

/**
 * Rooms by harness document: a room depends on the document alone, and views ask for it on every event of every
 * adapter (a quarter of a millisecond a turn of the edge's CPU in a workerd profile, re-measuring the same lines).
 * Harness documents are never changed once parsed: a new document is a new object, measured afresh.
 */
const measuredRooms = new WeakMap<HarnessDocument, Map<string, ViewRoom>>();

export function measureViewRoom(harness: HarnessDocument, adapter: string): ViewRoom {
  let rooms = measuredRooms.get(harness);
  if (!rooms) measuredRooms.set(harness, (rooms = new Map<string, ViewRoom>()));
  let room = rooms.get(adapter);
  if (!room) rooms.set(adapter, (room = Object.freeze(computeViewRoom(harness, adapter))));
  return room;
}

function computeViewRoom(harness: HarnessDocument, adapter: string): ViewRoom {
  const { templates, router } = harness;
  const label = adapterLabel(adapter);
  const lineEndBytes = countUtf8Bytes(templates.lineEnd);
  const maxLabelBytes = Math.max(...router.labels.map(countUtf8Bytes));
  if (label === adapterLabel(router.adapter)) {
    const reserveBytes = countUtf8Bytes(templates.routeCue) + maxLabelBytes + lineEndBytes;
    return splitBudget(router.viewBudgetBytes, countUtf8Bytes(renderRouterHeader(harness)), reserveBytes);
  }
  const specialist = findSpecialist(harness, label);
  if (!specialist) throw new RangeError(`no view for adapter "${adapter}" in this harness`);
  const answerBytes = countUtf8Bytes(templates.assistantCue) + specialist.answerViewMaxBytes + lineEndBytes;
  const otherSummaryBytes = router.labels
    .filter((label) => label !== adapter)
    .map((label) => findSpecialist(harness, label)?.summary.viewMaxBytes ?? 0);
  const summaryLineBytes =
    countUtf8Bytes(templates.summaryLine.replace("{label}", "").replace("{text}", "")) +
    maxLabelBytes +
    Math.max(0, ...otherSummaryBytes) +
    lineEndBytes;
  const headerBytes = countUtf8Bytes(renderSystemLine(harness, specialist.systemPrompt));
  return splitBudget(specialist.viewBudgetBytes, headerBytes, Math.max(answerBytes, summaryLineBytes));
}

function splitBudget(budgetBytes: number, headerBytes: number, reserveBytes: number): ViewRoom {
  return { budgetBytes, headerBytes, reserveBytes, roomBytes: budgetBytes - headerBytes - reserveBytes };
}
