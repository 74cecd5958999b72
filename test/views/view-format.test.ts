import { describe, expect, it } from "vitest";
import type { HopFacts, TimelineEvent } from "../../workers/src/db/timeline-event.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { readMaxUserMessageBytes } from "../../schema/harness/measure-view-room.ts";
import { countUtf8Bytes } from "../../schema/harness/utf8.ts";
import { findView, readViewText } from "../../workers/src/views/conversation-views.ts";
import {
  renderAnswerPrompt,
  renderRoutePrompt,
  renderSummaryPrompt,
} from "../../workers/src/views/render-prompts.ts";
import { buildConversationViews } from "../../workers/src/views/views-reducer.ts";

const hop: HopFacts = {
  nodeId: "n1",
  usage: { promptTokens: 0, cachedPromptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0 },
  nodeTimings: { queueMs: 0, prefillMs: 0, decodeMs: 0, totalMs: 0 },
  edgeTimings: { totalMs: 0 },
};
const h = DEFAULT_HARNESS;
const sys = (adapter: string) =>
  `system: ${adapter === "l0" ? h.router.systemPrompt : h.specialists[adapter]?.systemPrompt}\n`;

const TWO_TURNS: TimelineEvent[] = [
  { type: "user_message", turnId: "t1", text: "Reverse a string in Python?", harnessHash: "x" },
  { type: "route_decision", turnId: "t1", label: "coding", source: "router" },
  {
    type: "answer",
    turnId: "t1",
    adapter: "coding",
    revision: "r",
    text: " s[::-1]",
    finishReason: "stop",
    hop,
  },
  { type: "summary", turnId: "t1", adapter: "coding", text: "Slicing: s[::-1].", hop },
  { type: "user_message", turnId: "t2", text: "Thanks!", harnessHash: "x" },
  { type: "route_decision", turnId: "t2", label: "chat", source: "fallback" },
];

describe("the view format", () => {
  it("renders each adapter's view of a conversation", () => {
    const views = buildConversationViews(TWO_TURNS, h);
    expect(readViewText(views, "l0")).toBe(
      `${sys("l0")}user: Reverse a string in Python?\nroute:coding\nuser: Thanks!\nroute:chat\n`,
    );
    expect(readViewText(views, "coding")).toBe(
      `${sys("coding")}user: Reverse a string in Python?\nassistant: s[::-1]\nuser: Thanks!\n`,
    );
    expect(readViewText(views, "chat")).toBe(
      `${sys("chat")}user: Reverse a string in Python?\n[coding] Slicing: s[::-1].\nuser: Thanks!\n`,
    );
    expect(renderAnswerPrompt(views, "chat", h)).toBe(`${readViewText(views, "chat")}assistant:`);
    expect(renderSummaryPrompt(views, "coding", h)).toBe(
      `${readViewText(views, "coding")}system: ${h.specialists.coding?.summary.instruction}\nsummary:`,
    );
    const beforeRoute = buildConversationViews(TWO_TURNS.slice(0, 5), h);
    expect(renderRoutePrompt(beforeRoute, h)).toBe(`${readViewText(beforeRoute, "l0")}route:`);
  });

  it("truncates the router's user line to maxUserMessageChars code points, without splitting a pair", () => {
    const codePoints = Array.from({ length: h.router.maxUserMessageChars + 5 }, (_, i) =>
      i % 2 ? "😀" : "é",
    );
    const text = codePoints.join("");
    const views = buildConversationViews([{ type: "user_message", turnId: "t", text, harnessHash: "x" }], h);
    const kept = codePoints.slice(0, h.router.maxUserMessageChars - 1).join("");
    expect(readViewText(views, "l0")).toBe(`${sys("l0")}user: ${kept}…\n`);
    expect(readViewText(views, "chat")).toBe(`${sys("chat")}user: ${text}\n`);
  });

  it("clips a user message over readMaxUserMessageBytes instead of failing, and replaces lone surrogates", () => {
    const max = readMaxUserMessageBytes(h);
    expect(max).toBe(896);
    const views = buildConversationViews(
      [{ type: "user_message", turnId: "t", text: "é".repeat(max), harnessHash: "x" }],
      h,
    );
    const line = findView(views, "agent").turns[0]?.full ?? "";
    expect(countUtf8Bytes(line)).toBe(countUtf8Bytes("user: \n") + max - 1); // 447 é (2 bytes) + … (3 bytes)
    const lone = buildConversationViews(
      [{ type: "user_message", turnId: "t", text: "a\uD83D", harnessHash: "x" }],
      h,
    );
    expect(readViewText(lone, "chat").endsWith("user: a\uFFFD\n")).toBe(true);
  });

  it("clips a long answer in the specialist's view only, keeping the answer prompt a prefix", () => {
    const answer = "x".repeat(5000);
    const events: TimelineEvent[] = [
      ...TWO_TURNS.slice(0, 2),
      {
        type: "answer",
        turnId: "t1",
        adapter: "coding",
        revision: "r",
        text: answer,
        finishReason: "length",
        hop,
      },
    ];
    const views = buildConversationViews(events, h);
    const maxBytes = h.specialists.coding?.answerViewMaxBytes ?? 0;
    expect(readViewText(views, "coding").endsWith(`assistant:${"x".repeat(maxBytes - 3)}…\n`)).toBe(true);
  });

  it("ignores events out of turn order and repeats, so the views depend on the timeline alone", () => {
    const base = buildConversationViews(TWO_TURNS, h);
    const noisy = buildConversationViews(
      [
        {
          type: "answer",
          turnId: "nope",
          adapter: "chat",
          revision: "r",
          text: "ghost",
          finishReason: "stop",
          hop,
        },
        ...TWO_TURNS.slice(0, 3),
        {
          type: "answer",
          turnId: "t1",
          adapter: "coding",
          revision: "r",
          text: "again",
          finishReason: "stop",
          hop,
        },
        { type: "route_decision", turnId: "t1", label: "genui", source: "router" },
        ...TWO_TURNS.slice(3, 4),
        ...TWO_TURNS.slice(3, 4),
        ...TWO_TURNS.slice(4),
        { type: "summary_failed", turnId: "t2", adapter: "chat", code: "overloaded", message: "busy" },
        {
          type: "answer",
          turnId: "t2",
          adapter: "unknown",
          revision: "r",
          text: "?",
          finishReason: "stop",
          hop,
        },
      ],
      h,
    );
    expect(noisy).toEqual(base);
  });

  it("puts a summary that arrives after the next turn started into the compact forms only", () => {
    const late: TimelineEvent[] = [
      ...TWO_TURNS.slice(0, 3),
      TWO_TURNS[4] as TimelineEvent,
      { type: "summary", turnId: "t1", adapter: "coding", text: "Late summary.", hop },
    ];
    const views = buildConversationViews(late, h);
    expect(readViewText(views, "chat")).not.toContain("Late summary.");
    expect(findView(views, "chat").turns[0]?.compact).toBe(
      "user: Reverse a string in Python?\n[coding] Late summary.\n",
    );
    expect(findView(views, "coding").turns[0]?.compact).toContain("[coding] Late summary.");
  });

  it("appends nothing for failed and cancelled turns", () => {
    const events: TimelineEvent[] = [
      { type: "user_message", turnId: "t1", text: "one", harnessHash: "x" },
      { type: "turn_failed", turnId: "t1", hop: "route", code: "deadline_exceeded", message: "late" },
      { type: "route_decision", turnId: "t1", label: "chat", source: "router" },
      { type: "user_message", turnId: "t2", text: "two", harnessHash: "x" },
      { type: "route_decision", turnId: "t2", label: "chat", source: "router" },
      { type: "turn_cancelled", turnId: "t2", reason: "gone", partialChars: 4 },
    ];
    const views = buildConversationViews(events, h);
    expect(readViewText(views, "l0")).toBe(`${sys("l0")}user: one\nuser: two\nroute:chat\n`);
    expect(readViewText(views, "chat")).toBe(`${sys("chat")}user: one\nuser: two\n`);
  });
});
