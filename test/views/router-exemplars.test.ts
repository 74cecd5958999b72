import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema } from "../../schema/harness/harness-document.ts";
import { measureViewRoom } from "../../schema/harness/measure-view-room.ts";
import {
  renderRouteLine,
  renderRouterHeader,
  renderRouterViewOpening,
  renderSystemLine,
  renderUserLine,
} from "../../schema/harness/render-view-lines.ts";
import { countUtf8Bytes } from "../../schema/harness/utf8.ts";
import { createConversationViews, readViewText } from "../../workers/src/views/conversation-views.ts";
import { renderChatMessagesPrompt, renderRoutePrompt } from "../../workers/src/views/render-prompts.ts";
import { buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import { EXEMPLAR_HARNESS } from "./test-harnesses.ts";

/**
 * `router.exemplars`: worked examples in the router's header, rendered as turns are. The view properties (prefix,
 * budgets, rebuild) run over EXEMPLAR_HARNESS in view-properties.test.ts; these pin what the header holds and
 * what the schema refuses.
 */

const exemplars = EXEMPLAR_HARNESS.router.exemplars ?? [];

describe("router exemplars", () => {
  it("sit after the router's system line as user and route lines, in every route prompt", () => {
    const expected =
      renderSystemLine(EXEMPLAR_HARNESS, EXEMPLAR_HARNESS.router.systemPrompt) +
      exemplars
        .map(
          (e) =>
            renderUserLine(EXEMPLAR_HARNESS, e.text, EXEMPLAR_HARNESS.router.maxUserMessageChars) +
            renderRouteLine(EXEMPLAR_HARNESS, e.label),
        )
        .join("");
    expect(exemplars).toHaveLength(4);
    expect(renderRouterHeader(EXEMPLAR_HARNESS)).toBe(expected);
    expect(renderRouterViewOpening(EXEMPLAR_HARNESS)).toBe(expected + EXEMPLAR_HARNESS.templates.userPrefix);
    const views = createConversationViews(EXEMPLAR_HARNESS);
    expect(readViewText(views, EXEMPLAR_HARNESS.router.adapter)).toBe(expected);
    // A stored conversation and a stateless client's history render the same route prompt.
    const text = "fix this stack trace";
    const stored = buildConversationViews(
      [{ type: "user_message", turnId: "t1", text, harnessHash: "sha256:test" }],
      EXEMPLAR_HARNESS,
    );
    const route = renderRoutePrompt(stored, EXEMPLAR_HARNESS);
    expect(route.startsWith(expected)).toBe(true);
    expect(route).toBe(
      renderChatMessagesPrompt([{ role: "user", content: text }], "router", EXEMPLAR_HARNESS),
    );
    // Only the router's view has them.
    for (const label of EXEMPLAR_HARNESS.router.labels)
      expect(readViewText(views, label)).not.toContain(exemplars[0]?.text);
  });

  it("take their bytes from the router's room, and none without them", () => {
    const header = countUtf8Bytes(renderRouterHeader(EXEMPLAR_HARNESS));
    const plain = countUtf8Bytes(renderRouterHeader(DEFAULT_HARNESS));
    expect(header).toBeGreaterThan(plain);
    expect(measureViewRoom(EXEMPLAR_HARNESS, "l0").headerBytes).toBe(header);
    expect(
      measureViewRoom(DEFAULT_HARNESS, "l0").roomBytes - measureViewRoom(EXEMPLAR_HARNESS, "l0").roomBytes,
    ).toBe(header - plain);
    expect(renderRouterHeader(DEFAULT_HARNESS)).toBe(
      renderSystemLine(DEFAULT_HARNESS, DEFAULT_HARNESS.router.systemPrompt),
    );
  });

  it("are refused with the path named: an unknown label, an unknown key, an empty text, too many to fit", () => {
    const paths = (router: object) =>
      harnessDocumentSchema
        .safeParse({ ...DEFAULT_HARNESS, router: { ...DEFAULT_HARNESS.router, ...router } })
        .error?.issues.map((i) => i.path.join("."));
    expect(paths({ exemplars: [{ text: "hi", label: "poetry" }] })).toEqual(["router.exemplars.0.label"]);
    expect(paths({ exemplars: [{ text: "hi", label: "chat", weight: 1 }] })).toEqual(["router.exemplars.0"]);
    expect(paths({ exemplars: [{ text: "", label: "chat" }] })).toEqual(["router.exemplars.0.text"]);
    const many = Array.from({ length: 32 }, (_, i) => ({ text: `${i} ${"x".repeat(200)}`, label: "chat" }));
    expect(paths({ exemplars: many })).toEqual(["router.viewBudgetBytes"]);
    expect(paths({ exemplars: [...many, many[0]] })).toEqual(["router.exemplars"]);
    expect(paths({ exemplars: [] })).toBeUndefined();
  });
});
