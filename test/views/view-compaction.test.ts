import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { measureViewRoom } from "../../schema/harness/measure-view-room.ts";
import { countUtf8Bytes } from "../../schema/harness/utf8.ts";
import { SPECIALIST_LABELS } from "../../schema/wire/v2/index.ts";
import {
  createConversationViews,
  findView,
  readViewText,
  type ConversationViews,
} from "../../workers/src/views/conversation-views.ts";
import { applyEventToViews } from "../../workers/src/views/views-reducer.ts";
import { ROOMY_HARNESS, SMALL_HARNESS, listAdapters } from "./test-harnesses.ts";
import { buildTurnEvents, type TurnSpec } from "./timeline-arbitrary.ts";

const TURNS = 300;

/** Ordinary chat-sized turns (ASCII words), drawn from a fixed seed so the run is reproducible. */
function sampleTurns(seed: number): TurnSpec[] {
  const words = (min: number, max: number) =>
    fc
      .array(fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 9 }), {
        minLength: min,
        maxLength: max,
      })
      .map((w) => w.join(" "));
  const turn = fc.record({
    text: words(3, 25),
    source: fc.constantFrom("router" as const),
    label: fc.constantFrom(...SPECIALIST_LABELS),
    outcome: fc.constantFrom("answer" as const, "answer" as const, "answer" as const, "turn_failed" as const),
    answer: words(10, 80),
    summary: fc.constantFrom("summary" as const, "summary" as const, "summary_failed" as const),
    summaryText: words(5, 25),
  });
  return fc.sample(turn, { seed, numRuns: TURNS });
}

interface DriveResult {
  views: ConversationViews;
  /** Per adapter: user_message events whose previous view was not a prefix of the new one. */
  compactions: Map<string, number>;
}

function drive(turns: TurnSpec[], harness: HarnessDocument): DriveResult {
  const compactions = new Map(listAdapters(harness).map((adapter) => [adapter, 0]));
  let views = createConversationViews(harness);
  const events: TimelineEvent[] = turns.flatMap((turn, index) => buildTurnEvents(turn, index));
  for (const event of events) {
    const before = listAdapters(harness).map((adapter) => readViewText(views, adapter));
    views = applyEventToViews(views, event, harness);
    listAdapters(harness).forEach((adapter, i) => {
      const after = readViewText(views, adapter);
      expect(countUtf8Bytes(after)).toBeLessThanOrEqual(measureViewRoom(harness, adapter).budgetBytes);
      if (after.startsWith(before[i] ?? "")) return;
      expect(event.type).toBe("user_message");
      compactions.set(adapter, (compactions.get(adapter) ?? 0) + 1);
      // A compaction jumps far: the full turns then take at most keepFullFraction of the room.
      const view = findView(views, adapter);
      const fullBytes = countUtf8Bytes(view.turns.map((t) => t.full).join(""));
      const room = measureViewRoom(harness, adapter).roomBytes;
      if (view.turns.length > 1)
        expect(fullBytes).toBeLessThanOrEqual(harness.compaction.keepFullFraction * room);
    });
  }
  return { views, compactions };
}

describe("compaction over hundreds of turns", () => {
  it.each([1, 2, 3])("is rare and large with ordinary turns (seed %i)", (seed) => {
    const turns = sampleTurns(seed);
    const { views, compactions } = drive(turns, ROOMY_HARNESS);
    for (const [adapter, count] of compactions) {
      expect(count, adapter).toBeGreaterThan(0);
      // Most turns start on an unchanged prefix: the engine's KV cache for the view is reused.
      expect(count / TURNS, adapter).toBeLessThan(0.25);
    }
    // The most recent turns are still there in full.
    for (const label of SPECIALIST_LABELS) {
      const text = readViewText(views, label);
      for (const turn of turns.slice(-2)) expect(text).toContain(`user: ${turn.text}\n`);
      const lastAnswered = turns.findLast((t) => t.outcome === "answer" && t.label === label);
      const lastIndex = lastAnswered ? turns.lastIndexOf(lastAnswered) : -1;
      if (lastAnswered && lastIndex >= TURNS - 2)
        expect(text).toContain(`assistant:${lastAnswered.answer}\n`);
    }
    expect(readViewText(views, "l0")).toContain(`route:${turns.at(-1)?.label}\n`);
  });

  it("keeps working far past a small budget, the latest turn always in full", () => {
    const turns = sampleTurns(7);
    const { views, compactions } = drive(turns, SMALL_HARNESS);
    for (const count of compactions.values()) expect(count).toBeGreaterThan(5);
    const last = turns.at(-1);
    if (!last) throw new Error("no turns");
    for (const label of SPECIALIST_LABELS) {
      expect(readViewText(views, label)).toContain(`user: ${last.text}\n`);
      // Older turns survive as compact forms (truncated user line + summary) before the full ones.
      expect(findView(views, label).compacted.length).toBeGreaterThan(0);
    }
  });
});
