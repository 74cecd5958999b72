import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { GENUI_ANSWER_SKELETON } from "../../schema/harness/genui-contract-prompt.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import type { GenuiComponent, GenuiComponentStore } from "../../workers/src/genui/genui-component-store.ts";
import { readViewText } from "../../workers/src/views/conversation-views.ts";
import { buildConversationViews } from "../../workers/src/views/views-reducer.ts";
import {
  META,
  MemoryConversationStore,
  answerParts,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "./turn-loop-fixtures.ts";

/** What the model writes after the skeleton: the body and the closing brace. */
const BODY = `  return <Card title="Hi"><Text>hello</Text></Card>;
}`;

function withGenuiPrefix(prefix: string): HarnessDocument {
  const genui = DEFAULT_HARNESS.specialists.genui;
  if (!genui) throw new Error("no genui specialist");
  return harnessDocumentSchema.parse({
    ...DEFAULT_HARNESS,
    specialists: { ...DEFAULT_HARNESS.specialists, genui: { ...genui, answerPrefix: prefix } },
  });
}

function memoryComponents(): GenuiComponentStore & { rows: GenuiComponent[] } {
  const rows: GenuiComponent[] = [];
  return {
    rows,
    create: (component) => Promise.resolve(void rows.push(component)),
    get: (tenantId, id) => Promise.resolve(rows.find((r) => r.tenantId === tenantId && r.id === id)),
    getForRender: (id) => Promise.resolve(rows.find((r) => r.id === id)),
  };
}

async function runGenuiTurns(harness: HarnessDocument, texts: string[]) {
  const scripted = createScriptedHops({ answer: () => answerParts(BODY, usage(100, 5)) });
  const store = new MemoryConversationStore(META);
  const components = memoryComponents();
  const { deps, outbox } = createTestDeps(scripted.hops, {
    harness,
    genui: { components, newId: (prefix) => `${prefix}_1`, now: () => 1_700_000_000_000 },
  });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const streams: TurnStreamPart[][] = [];
  for (const text of texts) {
    const result = turns.startTurn({
      conversationId: META.id,
      text,
      forcedLabel: "genui",
      apiOrigin: "http://127.0.0.1:8787",
    });
    if (!result.ok) throw new Error(result.refusal.code);
    streams.push(await collectParts(result.stream));
    await turns.afterTurns(() => Promise.resolve());
  }
  return { store, calls: scripted.calls, streams, components };
}

describe("a prefilled answer opening (answerPrefix)", () => {
  const harness = withGenuiPrefix(GENUI_ANSWER_SKELETON);

  it("ends the answer prompt, starts the stored answer and is the client's first delta", async () => {
    const { store, calls, streams, components } = await runGenuiTurns(harness, ["a greeting card"]);
    const view = calls.answer[0]?.prompt ?? "";
    expect(view.endsWith(harness.templates.assistantCue + GENUI_ANSWER_SKELETON)).toBe(true);
    const answer = store.events.find((e) => e.type === "answer");
    expect(answer?.type === "answer" && answer.text).toBe(GENUI_ANSWER_SKELETON + BODY);
    const deltas = (streams[0] ?? []).flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));
    expect(deltas[0]).toBe(GENUI_ANSWER_SKELETON);
    expect(deltas.join("")).toBe(GENUI_ANSWER_SKELETON + BODY);
    const finish = streams[0]?.find((p) => p.type === "turn-finish");
    expect(finish?.type === "turn-finish" && finish.turn.answerText).toBe(GENUI_ANSWER_SKELETON + BODY);
    // The skeleton and the model's body make one valid module, validated and stored whole.
    expect(finish?.type === "turn-finish" && finish.turn.mol.genui?.status).toBe("valid");
    expect(components.rows[0]?.source).toBe(GENUI_ANSWER_SKELETON + BODY);
  });

  it("keeps each answer prompt a byte-prefix of the genui view after it, and shows the whole answer next turn", async () => {
    const { store, calls } = await runGenuiTurns(harness, ["a greeting card", "now a bigger one"]);
    const [first, second] = calls.answer.map((c) => c.prompt);
    const after = readViewText(buildConversationViews(store.events, harness), "genui");
    expect(after.startsWith(first ?? "")).toBe(true);
    expect(after.startsWith(second ?? "")).toBe(true);
    expect(second?.includes(harness.templates.assistantCue + GENUI_ANSWER_SKELETON + BODY)).toBe(true);
    expect(second?.endsWith(GENUI_ANSWER_SKELETON)).toBe(true);
  });

  it("is off by default and refused when the view's clip could cut it", () => {
    expect(DEFAULT_HARNESS.specialists.genui?.answerPrefix).toBeUndefined();
    const genui = DEFAULT_HARNESS.specialists.genui;
    const tooLong = harnessDocumentSchema.safeParse({
      ...DEFAULT_HARNESS,
      specialists: {
        ...DEFAULT_HARNESS.specialists,
        genui: { ...genui, answerViewMaxBytes: 64, answerPrefix: GENUI_ANSWER_SKELETON },
      },
    });
    expect(tooLong.success).toBe(false);
    expect(tooLong.error?.issues.map((i) => i.path.join("."))).toContain("specialists.genui.answerPrefix");
  });
});
