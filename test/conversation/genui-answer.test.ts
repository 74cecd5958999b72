import { describe, expect, it } from "vitest";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import { validateGenuiAnswer } from "../../workers/src/conversation/validate-genui-answer.ts";
import { extractComponentSource } from "../../workers/src/genui/extract-component-source.ts";
import {
  checkRenderToken,
  type GenuiComponent,
  type GenuiComponentStore,
} from "../../workers/src/genui/genui-component-store.ts";
import { buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { GENUI_CONTRACT_VERSION } from "../../schema/harness/genui-contract-prompt.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import { molSchema } from "../../schema/api/mol.ts";
import {
  META,
  MemoryConversationStore,
  answerParts,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "./turn-loop-fixtures.ts";

const COMPONENT = `import { Card, Text } from "@molmesh/ui";

export default function Hello() {
  return <Card title="Hi"><Text>hello</Text></Card>;
}`;

function memoryComponents(fail = false): GenuiComponentStore & { rows: GenuiComponent[] } {
  const rows: GenuiComponent[] = [];
  return {
    rows,
    create(component) {
      if (fail) return Promise.reject(new Error("D1 is down"));
      rows.push(component);
      return Promise.resolve();
    },
    get: (tenantId, id) => Promise.resolve(rows.find((r) => r.tenantId === tenantId && r.id === id)),
    getForRender: (id) => Promise.resolve(rows.find((r) => r.id === id)),
  };
}

const genuiDeps = (components: GenuiComponentStore) => ({
  components,
  newId: (prefix: string) => `${prefix}_1`,
  now: () => 1_700_000_000_000,
});

async function genuiTurn(
  answer: string,
  components = memoryComponents(),
  options: { harness?: HarnessDocument; label?: string } = {},
) {
  const scripted = createScriptedHops({ answer: () => answerParts(answer, usage(100, 5)) });
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, {
    genui: genuiDeps(components),
    ...(options.harness ? { harness: options.harness } : {}),
  });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const result = turns.startTurn({
    conversationId: META.id,
    text: "a greeting card",
    forcedLabel: options.label ?? "genui",
    apiOrigin: "http://127.0.0.1:8787",
  });
  if (!result.ok) throw new Error(result.refusal.code);
  const parts = await collectParts(result.stream);
  await turns.afterTurns(() => Promise.resolve());
  const finish = parts.find(
    (p): p is Extract<TurnStreamPart, { type: "turn-finish" }> => p.type === "turn-finish",
  );
  return { store, components, finish };
}

describe("genui answers in the turn loop", () => {
  it("validates a genui answer, stores the component and puts its render link in mol.genui", async () => {
    const { store, components, finish } = await genuiTurn("```jsx\n" + COMPONENT + "\n```");
    expect(store.events.map((e) => e.type)).toEqual([
      "user_message",
      "route_decision",
      "answer",
      "genui_validation",
      "summary",
    ]);
    const genui = finish?.turn.mol.genui;
    expect(genui).toMatchObject({ status: "valid", findings: 0, summary: "", componentId: "gc_1" });
    expect(molSchema.parse(finish?.turn.mol).genui).toEqual(genui);
    const url = new URL(genui?.renderUrl ?? "");
    expect(url.origin + url.pathname).toBe("http://127.0.0.1:8787/playground/render/gc_1");
    const [row] = components.rows;
    expect(row).toMatchObject({
      tenantId: META.tenantId,
      source: COMPONENT,
      hostOrigin: "http://127.0.0.1:8787",
    });
    expect(row && (await checkRenderToken(row, url.searchParams.get("t") ?? "", 1_700_000_000))).toBe(true);
    // The views ignore the verdict: the same as without it.
    const events = store.events;
    const without = events.filter((e) => e.type !== "genui_validation");
    expect(buildConversationViews(events, DEFAULT_HARNESS)).toEqual(
      buildConversationViews(without, DEFAULT_HARNESS),
    );
  });

  it("records a rejected answer with its findings and stores nothing", async () => {
    const { components, finish } = await genuiTurn(
      `import { Card } from "@molmesh/ui";\nexport default function A() { fetch("http://x"); return <Card />; }`,
    );
    expect(finish?.turn.mol.genui).toMatchObject({ status: "rejected", findings: 1 });
    expect(finish?.turn.mol.genui?.summary).toMatch(/^forbidden-global 2:\d+ /);
    expect(finish?.turn.mol.genui?.renderUrl).toBeUndefined();
    expect(components.rows).toHaveLength(0);
  });

  it("rejects an answer over 64 KiB (counted in UTF-8 bytes) or with a lone surrogate, storing no component", async () => {
    // 22,000 "€" are 66,000 bytes but only 22,000 characters: the limit is on bytes.
    const big = COMPONENT.replace("hello", "€".repeat(22_000));
    const lone = COMPONENT.replace("hello", "\ud800");
    for (const [answer, rule] of [
      [big, "source-too-large"],
      [lone, "source-not-utf8"],
    ] as const) {
      const { store, components, finish } = await genuiTurn(answer);
      expect(finish?.turn.mol.genui, rule).toMatchObject({ status: "rejected", findings: 1 });
      expect(finish?.turn.mol.genui?.summary).toMatch(new RegExp(`^${rule} `));
      expect(finish?.turn.mol.genui?.renderUrl).toBeUndefined();
      expect(components.rows).toHaveLength(0);
      expect(store.events.filter((e) => e.type === "genui_validation")).toHaveLength(1);
    }
  });

  it("keeps the verdict when storing fails, and gives other labels no verdict", async () => {
    const { finish } = await genuiTurn(COMPONENT, memoryComponents(true));
    expect(finish?.turn.mol.genui).toEqual({ status: "valid", findings: 0, summary: "" });
    const components = memoryComponents();
    const deps = genuiDeps(components);
    const other = {
      genuiLabels: ["genui"],
      turnId: "t",
      tenantId: "x",
      text: COMPONENT,
      apiOrigin: "http://a",
    };
    expect(await validateGenuiAnswer(deps, { ...other, label: "chat" })).toBeUndefined();
    expect(await validateGenuiAnswer(deps, { ...other, label: "genui", apiOrigin: undefined })).toMatchObject(
      {
        status: "valid",
      },
    );
    expect(components.rows).toHaveLength(0);
  });
});

describe("the harness's GenUI contract", () => {
  it("validates the answers of the labels it names, and only those", async () => {
    const harness = harnessDocumentSchema.parse({
      ...DEFAULT_HARNESS,
      genui: { contract: GENUI_CONTRACT_VERSION, labels: ["coding"] },
    });
    const coding = await genuiTurn(COMPONENT, memoryComponents(), { harness, label: "coding" });
    expect(coding.finish?.turn.mol.genui).toMatchObject({ status: "valid", componentId: "gc_1" });
    const genui = await genuiTurn(COMPONENT, memoryComponents(), { harness, label: "genui" });
    expect(genui.finish?.turn.mol.genui).toBeUndefined();
    expect(genui.store.events.some((e) => e.type === "genui_validation")).toBe(false);
    // The default: the `genui` label only.
    const chat = await genuiTurn(COMPONENT, memoryComponents(), { label: "chat" });
    expect(chat.finish?.turn.mol.genui).toBeUndefined();
  });

  it("refuses a contract version the edge does not implement, and labels that are not the router's", () => {
    const bad = (genui: unknown) =>
      harnessDocumentSchema
        .safeParse({ ...DEFAULT_HARNESS, genui })
        .error?.issues.map((i) => i.path.join("."));
    expect(bad({ contract: "molmesh.genui.v2", labels: ["genui"] })).toEqual(["genui.contract"]);
    expect(bad({ contract: GENUI_CONTRACT_VERSION, labels: ["nope"] })).toEqual(["genui.labels.0"]);
    expect(bad({ contract: GENUI_CONTRACT_VERSION, labels: ["genui", "genui"] })).toEqual(["genui.labels"]);
    expect(bad({ contract: GENUI_CONTRACT_VERSION, labels: [], extra: 1 })).toEqual(["genui"]);
    expect(bad({ contract: GENUI_CONTRACT_VERSION, labels: [] })).toBeUndefined();
  });
});

describe("extractComponentSource", () => {
  it.each([
    [
      "a fenced block",
      "Here you go:\n```tsx\nexport default () => null\n```\nEnjoy!",
      "export default () => null",
    ],
    ["an unclosed fence", "```jsx\nexport default () => null", "export default () => null"],
    [
      "prose before the module",
      "Sure.\nimport x from 'react';\nexport default x",
      "import x from 'react';\nexport default x",
    ],
    ["plain prose", "  no code here ", "no code here"],
  ])("takes %s", (_name, answer, expected) => {
    expect(extractComponentSource(answer)).toBe(expected);
  });
});
