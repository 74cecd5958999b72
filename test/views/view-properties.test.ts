import fc from "fast-check";
import { PROPERTY_LIMITS } from "./property-limits.ts";
import { describe, expect, it } from "vitest";
import type { TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { GENUI_ANSWER_SKELETON } from "../../schema/harness/genui-contract-prompt.ts";
import { harnessDocumentSchema } from "../../schema/harness/harness-document.ts";
import { measureViewRoom } from "../../schema/harness/measure-view-room.ts";
import { countUtf8Bytes } from "../../schema/harness/utf8.ts";
import {
  createConversationViews,
  readViewText,
  type ConversationViews,
} from "../../workers/src/views/conversation-views.ts";
import { renderRoutePrompt, renderSummaryPrompt } from "../../workers/src/views/render-prompts.ts";
import { applyEventToViews, buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import { sendableAnswerPrompt } from "./sendable-answer-prompt.ts";
import {
  BOUNDED_HARNESS,
  EXEMPLAR_HARNESS,
  FAMILY_HARNESSES,
  LARGE_HARNESS,
  SMALL_FAMILY_HARNESSES,
  SMALL_HARNESS,
  SMALL_INTERIM_HARNESS,
  isBytePrefix,
  listAdapters,
  snapshotTexts,
  withSummaryWait,
} from "./test-harnesses.ts";
import { timelineArb } from "./timeline-arbitrary.ts";

const HARNESSES: Array<[string, HarnessDocument]> = [
  ["default", DEFAULT_HARNESS],
  ["small", SMALL_HARNESS],
  ["large", LARGE_HARNESS],
  ["default, bounded summary wait", BOUNDED_HARNESS],
  ["small, bounded summary wait", withSummaryWait(SMALL_HARNESS, { mode: "bounded" })],
  ["small, 16-byte interim lines", SMALL_INTERIM_HARNESS],
  ["default, router exemplars", EXEMPLAR_HARNESS],
  ...FAMILY_HARNESSES,
  ...SMALL_FAMILY_HARNESSES,
];

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

describe.each(HARNESSES)("views under the %s harness", (_name, harness) => {
  it("grow only at their end, except where a new turn compacts", () => {
    fc.assert(
      fc.property(timelineArb(12), (events) => {
        let views = createConversationViews(harness);
        for (const event of events) {
          const before = snapshotTexts(views, harness);
          views = applyEventToViews(views, event, harness);
          const after = snapshotTexts(views, harness);
          // Only a user_message may compact, and with the large harness nothing ever does.
          if (event.type !== "user_message" || harness === LARGE_HARNESS) {
            before.forEach((text, i) => {
              expect(isBytePrefix(text, after[i] ?? "")).toBe(true);
            });
          }
        }
      }),
      { numRuns: 60, ...PROPERTY_LIMITS },
    );
  });

  it("leave every view's text as it was when a summary lands after the next turn started", () => {
    fc.assert(
      fc.property(timelineArb(12), (events) => {
        let views = createConversationViews(harness);
        for (const event of events) {
          const late = event.type === "summary" && views.turn?.turnId !== event.turnId;
          const before = snapshotTexts(views, harness);
          views = applyEventToViews(views, event, harness);
          // Only the compact forms of its turn take it (they show when that turn compacts, later).
          if (late) expect(snapshotTexts(views, harness)).toEqual(before);
        }
      }),
      { numRuns: 60, ...PROPERTY_LIMITS },
    );
  });

  it("render the route prompt for a user message not yet appended as the one after it is", () => {
    fc.assert(
      fc.property(timelineArb(8), fc.string({ maxLength: 80 }), (events, text) => {
        let views = buildConversationViews(events, harness);
        const next: TimelineEvent = {
          type: "user_message",
          turnId: "next",
          text,
          harnessHash: "sha256:test",
        };
        const early = renderRoutePrompt(applyEventToViews(views, next, harness), harness);
        // A summary of the last turn landing first changes nothing the router sees.
        const last = events.findLast((e) => e.type === "answer");
        if (last?.type === "answer") {
          const { turnId, adapter, hop } = last;
          const summary: TimelineEvent = { type: "summary", turnId, adapter, text: "late or not", hop };
          views = applyEventToViews(views, summary, harness);
        }
        expect(renderRoutePrompt(applyEventToViews(views, next, harness), harness)).toBe(early);
      }),
      { numRuns: 60, ...PROPERTY_LIMITS },
    );
  });

  it("make each hop's prompt a byte-prefix of the view after that hop's event", () => {
    fc.assert(
      fc.property(timelineArb(12), (events) => {
        let views = createConversationViews(harness);
        for (const event of events) {
          const prompt =
            event.type === "route_decision"
              ? renderRoutePrompt(views, harness)
              : event.type === "answer"
                ? sendableAnswerPrompt(views, event.adapter, harness)
                : null;
          if (event.type === "summary")
            expect(renderSummaryPrompt(views, event.adapter, harness)).toContain(
              harness === DEFAULT_HARNESS ? "summary:" : harness.templates.summaryCue,
            );
          views = applyEventToViews(views, event, harness);
          if (event.type === "route_decision") {
            expect(isBytePrefix(prompt ?? "", readViewText(views, harness.router.adapter))).toBe(true);
          }
          if (event.type === "answer" && prompt !== null)
            expect(isBytePrefix(prompt, readViewText(views, event.adapter))).toBe(true);
        }
      }),
      { numRuns: 60, ...PROPERTY_LIMITS },
    );
  });

  it("never pass their byte budget, after any event", () => {
    fc.assert(
      fc.property(timelineArb(30, 200), (events) => {
        let views = createConversationViews(harness);
        for (const event of events) {
          views = applyEventToViews(views, event, harness);
          for (const adapter of listAdapters(harness)) {
            const bytes = countUtf8Bytes(readViewText(views, adapter));
            expect(bytes).toBeLessThanOrEqual(measureViewRoom(harness, adapter).budgetBytes);
          }
        }
      }),
      { numRuns: 40, ...PROPERTY_LIMITS },
    );
  });

  it("are deterministic: batch = incremental = incremental through JSON, inputs never mutated", () => {
    fc.assert(
      fc.property(timelineArb(10), (events: TimelineEvent[]) => {
        const batch = buildConversationViews(events, harness);
        let incremental = createConversationViews(harness);
        let stored = createConversationViews(harness);
        for (const event of events) {
          incremental = applyEventToViews(deepFreeze(incremental), deepFreeze(event), harness);
          stored = applyEventToViews(JSON.parse(JSON.stringify(stored)) as ConversationViews, event, harness);
        }
        expect(incremental).toEqual(batch);
        expect(JSON.stringify(stored)).toBe(JSON.stringify(batch));
        expect(snapshotTexts(buildConversationViews(events, harness), harness)).toEqual(
          snapshotTexts(batch, harness),
        );
      }),
      { numRuns: 40, ...PROPERTY_LIMITS },
    );
  });
});

describe.each([...FAMILY_HARNESSES, ...SMALL_FAMILY_HARNESSES])(
  "views in the %s format",
  (_name, harness) => {
    it("hold special-token sentinels only where a template put them: client text cannot open a turn", () => {
      const strip = (text: string) => text.replace(/[\uE000\uE001]/g, "");
      fc.assert(
        fc.property(timelineArb(8), (events) => {
          const stripped = events.map((event) =>
            "text" in event ? { ...event, text: strip(event.text) } : event,
          ) as TimelineEvent[];
          const views = buildConversationViews(events, harness);
          expect(snapshotTexts(views, harness)).toEqual(
            snapshotTexts(buildConversationViews(stripped, harness), harness),
          );
        }),
        { numRuns: 30, ...PROPERTY_LIMITS },
      );
    });
  },
);

describe("views across turns", () => {
  it("keep each adapter's whole view as a prefix of every later view when nothing compacts", () => {
    fc.assert(
      fc.property(timelineArb(10), (events) => {
        let views = createConversationViews(LARGE_HARNESS);
        const history: string[][] = [];
        for (const event of events) {
          views = applyEventToViews(views, event, LARGE_HARNESS);
          if (event.type === "user_message") history.push(snapshotTexts(views, LARGE_HARNESS));
        }
        const last = snapshotTexts(views, LARGE_HARNESS);
        for (const texts of history)
          texts.forEach((text, i) => {
            expect(isBytePrefix(text, last[i] ?? "")).toBe(true);
          });
      }),
      { numRuns: 40, ...PROPERTY_LIMITS },
    );
  });
});

/** `harness` with every specialist's answer starting from `prefix`. */
function withAnswerPrefix(harness: HarnessDocument, prefix: string): HarnessDocument {
  const specialists = Object.fromEntries(
    Object.entries(harness.specialists).map(([label, s]) => [label, { ...s, answerPrefix: prefix }]),
  );
  return harnessDocumentSchema.parse({ ...harness, specialists });
}

describe.each([["default", DEFAULT_HARNESS], ["small", SMALL_HARNESS], ...SMALL_FAMILY_HARNESSES])(
  "views under the %s harness with an answer prefix",
  (_name, base) => {
    it("make each answer prompt, its prefix included, a byte-prefix of the view after the answer", () => {
      fc.assert(
        fc.property(
          timelineArb(12),
          fc.constantFrom(GENUI_ANSWER_SKELETON, "```jsx\n", "Réponse ✓ "),
          (events, prefix) => {
            const harness = withAnswerPrefix(base, prefix);
            let views = createConversationViews(harness);
            for (const event of events) {
              // The answer hop stores the text it streamed, which starts with the prefix.
              const stored = event.type === "answer" ? { ...event, text: prefix + event.text } : event;
              const answerPrompt =
                stored.type === "answer" ? sendableAnswerPrompt(views, stored.adapter, harness) : null;
              const prompt = answerPrompt === null ? null : answerPrompt + prefix;
              views = applyEventToViews(views, stored, harness);
              if (prompt !== null && stored.type === "answer") {
                const after = readViewText(views, stored.adapter);
                expect(isBytePrefix(prompt, after)).toBe(true);
                expect(after.includes(harness.templates.assistantCue + prefix)).toBe(true);
              }
            }
          },
        ),
        { numRuns: 40, ...PROPERTY_LIMITS },
      );
    });
  },
);
