import fc from "fast-check";
import { PROPERTY_LIMITS } from "./property-limits.ts";
import { describe, expect, it } from "vitest";
import type { HopFacts, TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-document.ts";
import { countUtf8Bytes } from "../../schema/harness/utf8.ts";
import { ViewBudgetError } from "../../workers/src/views/conversation-views.ts";
import {
  renderAnswerPrompt,
  renderChatMessagesPrompt,
  type ChatPromptMessage,
} from "../../workers/src/views/render-prompts.ts";
import { buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import { LARGE_HARNESS, SMALL_HARNESS } from "./test-harnesses.ts";
import { textArb } from "./timeline-arbitrary.ts";

const h = DEFAULT_HARNESS;
const hop: HopFacts = {
  nodeId: "n1",
  usage: { promptTokens: 0, cachedPromptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0 },
  nodeTimings: { queueMs: 0, prefillMs: 0, decodeMs: 0, totalMs: 0 },
  edgeTimings: { totalMs: 0 },
};

const exchangesArb = (maxLength: number) =>
  fc.array(fc.tuple(textArb(100), textArb(200)), { minLength: 1, maxLength });

function toMessages(exchanges: Array<[string, string]>): ChatPromptMessage[] {
  return exchanges.flatMap(([user, assistant]): ChatPromptMessage[] => [
    { role: "user", content: user },
    { role: "assistant", content: assistant },
  ]);
}

describe("renderChatMessagesPrompt", () => {
  const messages: ChatPromptMessage[] = [
    { role: "user", content: "hi" },
    { role: "system", content: "Answer in French." },
    { role: "assistant", content: " salut" },
    { role: "user", content: "ça va ?" },
  ];

  it("renders the client's messages in the harness templates, client system lines after the harness's", () => {
    expect(renderChatMessagesPrompt(messages, "chat", h)).toBe(
      `system: ${h.specialists.chat?.systemPrompt}\nsystem: Answer in French.\n` +
        "user: hi\nassistant: salut\nuser: ça va ?\nassistant:",
    );
    expect(renderChatMessagesPrompt(messages, "router", h)).toBe(
      `system: ${h.router.systemPrompt}\nsystem: Answer in French.\nuser: hi\nuser: ça va ?\nroute:`,
    );
    expect(renderChatMessagesPrompt(messages, "l0", h)).toBe(renderChatMessagesPrompt(messages, "router", h));
  });

  it.each<[string, HarnessDocument]>([
    ["default", DEFAULT_HARNESS],
    ["small", SMALL_HARNESS],
  ])(
    "equals a stored conversation's answer prompt when one specialist answers every turn (%s)",
    (_n, harness) => {
      fc.assert(
        fc.property(exchangesArb(25), textArb(100), (exchanges, next) => {
          const events: TimelineEvent[] = exchanges.flatMap(([user, answer], i): TimelineEvent[] => [
            { type: "user_message", turnId: `t${i}`, text: user, harnessHash: "x" },
            { type: "route_decision", turnId: `t${i}`, label: "coding", source: "forced" },
            {
              type: "answer",
              turnId: `t${i}`,
              adapter: "coding",
              revision: "r",
              text: answer,
              finishReason: "stop",
              hop,
            },
          ]);
          events.push({ type: "user_message", turnId: "next", text: next, harnessHash: "x" });
          const stored = renderAnswerPrompt(buildConversationViews(events, harness), "coding", harness);
          const stateless = renderChatMessagesPrompt(
            [...toMessages(exchanges), { role: "user", content: next }],
            "coding",
            harness,
          );
          expect(stateless).toBe(stored);
        }),
        { numRuns: 40, ...PROPERTY_LIMITS },
      );
    },
  );

  it("keeps a stable prefix as a client resends a growing history (no compaction)", () => {
    fc.assert(
      fc.property(exchangesArb(8), exchangesArb(3), (first, more) => {
        for (const target of ["router", "agent"]) {
          const cue = target === "router" ? "route:" : "assistant:";
          const before = renderChatMessagesPrompt(toMessages(first), target, LARGE_HARNESS).slice(
            0,
            -cue.length,
          );
          const after = renderChatMessagesPrompt(toMessages([...first, ...more]), target, LARGE_HARNESS);
          expect(after.startsWith(before)).toBe(true);
        }
      }),
      { numRuns: 40, ...PROPERTY_LIMITS },
    );
  });

  it("stays within the budget however long the history", () => {
    fc.assert(
      fc.property(exchangesArb(60), (exchanges) => {
        const messages = toMessages(exchanges);
        const view = renderChatMessagesPrompt(messages, "genui", SMALL_HARNESS).slice(
          0,
          -"assistant:".length,
        );
        expect(countUtf8Bytes(view)).toBeLessThanOrEqual(
          SMALL_HARNESS.specialists.genui?.viewBudgetBytes ?? 0,
        );
        const routeView = renderChatMessagesPrompt(messages, "router", SMALL_HARNESS).slice(
          0,
          -"route:".length,
        );
        expect(countUtf8Bytes(routeView)).toBeLessThanOrEqual(SMALL_HARNESS.router.viewBudgetBytes);
      }),
      { numRuns: 40, ...PROPERTY_LIMITS },
    );
  });

  it("refuses an unknown target and more system lines than the budget holds", () => {
    expect(() => renderChatMessagesPrompt(messages, "nope", h)).toThrow(RangeError);
    const many: ChatPromptMessage[] = [
      ...Array.from({ length: 1000 }, (): ChatPromptMessage => ({ role: "system", content: "x" })),
      ...messages,
    ];
    expect(() => renderChatMessagesPrompt(many, "chat", h)).toThrow(ViewBudgetError);
  });

  it("clips long system, user and assistant messages head and tail instead of refusing them", () => {
    const long = (c: string) => `${c.repeat(1000)}${"x".repeat(30_000)}${c.repeat(1000)}`;
    const huge: ChatPromptMessage[] = [
      { role: "system", content: long("s") },
      { role: "user", content: long("u") },
      { role: "assistant", content: long("a") },
      { role: "user", content: long("v") },
    ];
    for (const target of ["chat", "router"]) {
      const prompt = renderChatMessagesPrompt(huge, target, h);
      const budget =
        target === "chat" ? (h.specialists.chat?.viewBudgetBytes ?? 0) : h.router.viewBudgetBytes;
      expect(countUtf8Bytes(prompt)).toBeLessThanOrEqual(budget);
      expect(prompt).toMatch(/\nsystem: s+x*…x*s+\n/);
    }
    expect(renderChatMessagesPrompt(huge, "chat", h)).toMatch(/\nuser: v+x*…x*v+\nassistant:$/);
  });
});
