import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import {
  describeTools,
  renderToolsBlock,
  toolsChanged,
  type ViewTool,
} from "../../schema/harness/tools-block.ts";
import { createConversationViews, readViewText } from "../../workers/src/views/conversation-views.ts";
import { applyEventToViews } from "../../workers/src/views/views-reducer.ts";
import { PROPERTY_LIMITS } from "./property-limits.ts";
import { sendableAnswerPrompt } from "./sendable-answer-prompt.ts";
import { LARGE_HARNESS, SMALL_HARNESS, listAdapters } from "./test-harnesses.ts";
import { buildTurnEvents, turnSpecArb } from "./timeline-arbitrary.ts";

const HARNESSES: Array<[string, HarnessDocument]> = [
  ["default", DEFAULT_HARNESS],
  ["small", SMALL_HARNESS],
  ["large", LARGE_HARNESS],
];

function isBytePrefix(prefix: string, text: string): boolean {
  const a = new TextEncoder().encode(prefix);
  const b = new TextEncoder().encode(text);
  return a.length <= b.length && a.every((byte, i) => byte === b[i]);
}

const toolArb: fc.Arbitrary<ViewTool> = fc.record(
  {
    name: fc.constantFrom("get_weather", "add", "search", "z"),
    description: fc.string({ maxLength: 30 }),
    parameters: fc.constantFrom<Record<string, unknown>>(
      { type: "object", properties: {} },
      { type: "object", properties: { q: { type: "string" }, n: { type: "integer" } } },
    ),
  },
  { requiredKeys: ["name", "parameters"] },
);
const toolSetArb = fc.uniqueArray(toolArb, { maxLength: 3, selector: (tool) => tool.name });

/** Turns, each maybe carrying a tool set; a `tools_changed` follows its user_message when the set changed. */
const timelineWithToolsArb = fc
  .array(fc.tuple(turnSpecArb(80), fc.option(toolSetArb, { nil: undefined })), {
    minLength: 1,
    maxLength: 10,
  })
  .map((turns) => {
    let shown: ViewTool[] | undefined;
    return turns.flatMap(([spec, tools], index) => {
      const events = buildTurnEvents(spec, index);
      if (tools === undefined || !toolsChanged(shown, tools)) return events;
      shown = tools;
      // A turn may open with instructions or earlier messages: the tool set follows its user message.
      const at = events.findIndex((event) => event.type === "user_message") + 1;
      const user = events[at - 1] as TimelineEvent;
      const changed = { type: "tools_changed", turnId: user.turnId, tools } satisfies TimelineEvent;
      return [...events.slice(0, at), changed, ...events.slice(at)];
    });
  });

describe("the tools block", () => {
  it("is the same bytes whatever order tools and their keys come in", () => {
    const a: ViewTool = { name: "b", parameters: { type: "object", properties: { x: { type: "string" } } } };
    const b: ViewTool = { name: "a", description: "d", parameters: { properties: {}, type: "object" } };
    const swapped: ViewTool = {
      name: "b",
      parameters: { properties: { x: { type: "string" } }, type: "object" },
    };
    expect(describeTools([a, b])).toBe(describeTools([b, swapped]));
    expect(describeTools([a, b]).split("\n").slice(1)).toEqual([
      '{"description":"d","name":"a","parameters":{"properties":{},"type":"object"}}',
      '{"name":"b","parameters":{"properties":{"x":{"type":"string"}},"type":"object"}}',
    ]);
    expect(toolsChanged(undefined, [])).toBe(false);
    expect(toolsChanged([a], [swapped])).toBe(false);
    expect(toolsChanged([a], [])).toBe(true);
  });

  describe.each(HARNESSES)("under the %s harness", (_name, harness) => {
    it("keeps every hop's prompt a byte-prefix of the next view, through tool-set changes", () => {
      fc.assert(
        fc.property(timelineWithToolsArb, (events) => {
          let views = createConversationViews(harness);
          for (const event of events) {
            const before = listAdapters(harness).map((adapter) => readViewText(views, adapter));
            const prompt =
              event.type === "answer" ? sendableAnswerPrompt(views, event.adapter, harness) : null;
            views = applyEventToViews(views, event, harness);
            if (event.type === "tools_changed") {
              listAdapters(harness).forEach((adapter, i) => {
                const after = readViewText(views, adapter);
                expect(isBytePrefix(before[i] ?? "", after)).toBe(true);
                if (adapter !== harness.router.adapter && harness === LARGE_HARNESS) {
                  expect(after.endsWith(renderToolsBlock(harness, event.tools))).toBe(true);
                }
              });
            }
            if (event.type === "answer" && prompt !== null)
              expect(isBytePrefix(prompt, readViewText(views, event.adapter))).toBe(true);
          }
        }),
        { numRuns: 60, ...PROPERTY_LIMITS },
      );
    });
  });
});

describe("a view with tools across turns", () => {
  it("only grows at its end, tool-set changes included, under the large harness", () => {
    fc.assert(
      fc.property(timelineWithToolsArb, (events) => {
        let views = createConversationViews(LARGE_HARNESS);
        let changes = 0;
        for (const event of events) {
          const before = listAdapters(LARGE_HARNESS).map((adapter) => readViewText(views, adapter));
          views = applyEventToViews(views, event, LARGE_HARNESS);
          if (event.type === "tools_changed") changes += 1;
          listAdapters(LARGE_HARNESS).forEach((adapter, i) => {
            expect(isBytePrefix(before[i] ?? "", readViewText(views, adapter))).toBe(true);
          });
        }
        // Every block the timeline appended is still in each specialist's view, in order.
        const specialist = listAdapters(LARGE_HARNESS).find((a) => a !== LARGE_HARNESS.router.adapter) ?? "";
        const text = readViewText(views, specialist);
        const blocks = events.flatMap((event) =>
          event.type === "tools_changed" ? [renderToolsBlock(LARGE_HARNESS, event.tools)] : [],
        );
        expect(blocks).toHaveLength(changes);
        let from = 0;
        for (const block of blocks) {
          const at = text.indexOf(block, from);
          expect(at).toBeGreaterThanOrEqual(from);
          from = at + block.length;
        }
      }),
      { numRuns: 60, ...PROPERTY_LIMITS },
    );
  });
});
