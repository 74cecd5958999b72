import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EngineFailureError } from "../../schema/wire/v2/index.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import type { TurnProgram } from "../../schema/harness/harness-settings.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import { answerTurn } from "../../workers/src/steps/answer-step.ts";
import { defineStep } from "../../workers/src/steps/step-kind.ts";
import { DEFAULT_STEP_KINDS, createStepRegistry } from "../../workers/src/steps/step-registry.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
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

// A step kind is one concept file and its registration: these two toy kinds are defined here, in the test, and run
// through the real turn loop with no change to the wire or the node. A checker rejects an answer that lacks a word
// and says why; a repair step answers again, from the specialist's view, which now holds that message.

const mustMention = defineStep({
  kind: "must-mention",
  options: z.strictObject({ word: z.string() }),
  run(ctx, options) {
    const answer = ctx.turn.answer;
    if (!answer) return Promise.resolve({ stop: true });
    const pass = answer.text.includes(options.word);
    ctx.append({
      type: "step",
      turnId: ctx.turn.turnId,
      step: ctx.step,
      kind: "must-mention",
      verdict: pass ? "pass" : "fail",
      ...(pass ? {} : { note: `Your answer must mention ${options.word}. Answer again.` }),
    });
    // Passing ends the program's critical steps; failing goes on to the repair that follows.
    return Promise.resolve(pass ? { stop: true } : undefined);
  },
});

const repair = defineStep({
  kind: "repair",
  options: z.strictObject({ check: z.string() }),
  async run(ctx, options) {
    await answerTurn(ctx, { stream: false, revises: true });
    return { goto: options.check };
  },
});

const TOY_KINDS = createStepRegistry([...DEFAULT_STEP_KINDS.values(), mustMention, repair]);

function withProgram(turn: TurnProgram): HarnessDocument {
  return harnessDocumentSchema.parse({ ...DEFAULT_HARNESS, turn });
}

const CHECKED: TurnProgram = {
  steps: [
    { kind: "route" },
    // Held back until the check passes: the client gets the final answer, whole, when the turn ends.
    { kind: "answer", options: { stream: false } },
    { kind: "must-mention", options: { word: "Paris" } },
    { kind: "repair", options: { check: "must-mention" } },
    { kind: "summary", background: true },
  ],
  stop: { maxSteps: 8 },
};

async function runTurn(harness: HarnessDocument, answers: string[]) {
  let call = 0;
  const scripted = createScriptedHops({
    answer: () => answerParts(answers[Math.min(call++, answers.length - 1)] ?? "", usage(100, 5)),
  });
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, { harness, steps: TOY_KINDS });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const result = turns.startTurn({ conversationId: META.id, text: "What is the capital of France?" });
  if (!result.ok) throw new Error(result.refusal.code);
  const parts = await collectParts(result.stream);
  await turns.afterTurns(() => Promise.resolve());
  return { parts, store, scripted };
}

describe("a turn's step program", () => {
  it("runs a checker that rejects an answer and a repair that fixes it, with nothing new on the wire", async () => {
    const { parts, store, scripted } = await runTurn(withProgram(CHECKED), [
      "I am not sure.",
      "It is Paris.",
    ]);
    expect(store.events.map((e) => (e.type === "step" ? `step:${e.verdict}` : e.type))).toEqual([
      "user_message",
      "route_decision",
      "answer",
      "step:fail",
      "answer",
      "step:pass",
      "summary",
    ]);
    // The client saw only the repaired answer, once, and the turn record is it.
    expect(parts.map((p) => p.type)).toEqual(["turn-start", "text-delta", "turn-finish"]);
    expect(parts[1]).toEqual({ type: "text-delta", delta: "It is Paris." });
    const finish = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-finish" }>;
    expect(finish.turn).toMatchObject({ status: "completed", answerText: "It is Paris." });
    // The repair answered from the specialist's view, which holds the first answer and the checker's message after
    // the first prompt: the node reuses that prompt's KV.
    const [first, second] = scripted.calls.answer.map((c) => c.prompt);
    expect(second?.startsWith(first ?? "\0")).toBe(true);
    expect(second).toContain("I am not sure.");
    expect(second).toContain("Your answer must mention Paris.");
    // Plain generate requests: the same adapter, slot and priority as any answer.
    expect(scripted.calls.answer.map((c) => [c.adapter, c.slotKey, c.priority])).toEqual([
      ["coding", META.id, "answer"],
      ["coding", META.id, "answer"],
    ]);
    // The views stay a pure function of the timeline: rebuilt from the events, the view ends with the repaired
    // answer and the summary prompt was read from it.
    const views = buildConversationViews(store.events, withProgram(CHECKED));
    expect(readViewText(views, "coding")).toContain("It is Paris.");
    expect(scripted.calls.summary[0]?.prompt).toContain("It is Paris.");
  });

  it("passes a good first answer through, streamed once at the end, with one check", async () => {
    const { parts, store, scripted } = await runTurn(withProgram(CHECKED), ["Paris, of course."]);
    expect(scripted.calls.answer).toHaveLength(1);
    expect(store.events.filter((e) => e.type === "step")).toMatchObject([{ verdict: "pass" }]);
    expect(parts.filter((p) => p.type === "text-delta")).toEqual([
      { type: "text-delta", delta: "Paris, of course." },
    ]);
  });

  it("stops a repair loop at maxSteps and keeps the last answer", async () => {
    const harness = withProgram({ ...CHECKED, stop: { maxSteps: 6 } });
    const { parts, scripted } = await runTurn(harness, ["Never the right answer."]);
    // route, answer, check, repair, check, repair: six steps, three answers in all.
    expect(scripted.calls.answer).toHaveLength(3);
    expect(parts.at(-1)).toMatchObject({ type: "turn-finish", turn: { status: "completed" } });
  });

  it("keeps the answer it has when a later step fails, and records that step's failure", async () => {
    let call = 0;
    const scripted = createScriptedHops({
      answer: () => {
        call += 1;
        if (call === 1) return answerParts("I am not sure.", usage(100, 5));
        // eslint-disable-next-line @typescript-eslint/require-await -- a stream that fails on its first read
        return (async function* () {
          yield* [];
          throw new EngineFailureError("the node broke");
        })();
      },
    });
    const store = new MemoryConversationStore(META);
    const { deps, outbox } = createTestDeps(scripted.hops, {
      harness: withProgram(CHECKED),
      steps: TOY_KINDS,
    });
    const turns = new ConversationTurns({ ...deps, store, outbox });
    const result = turns.startTurn({ conversationId: META.id, text: "What is the capital of France?" });
    if (!result.ok) throw new Error(result.refusal.code);
    const parts = await collectParts(result.stream);
    await turns.afterTurns(() => Promise.resolve());
    const steps = store.events.filter((e) => e.type === "step");
    expect(steps).toMatchObject([
      { step: "must-mention", verdict: "fail" },
      { step: "repair", verdict: "fail", data: { code: "engine_failure" } },
    ]);
    expect(parts.at(-1)).toMatchObject({
      type: "turn-finish",
      turn: { status: "completed", answerText: "I am not sure." },
    });
  });

  it("fails the turn with budget_exceeded when the program stops before any answer", async () => {
    const harness = withProgram({ steps: CHECKED.steps, stop: { maxSteps: 1 } });
    const { parts, store } = await runTurn(harness, ["Paris."]);
    expect(store.events.map((e) => e.type)).toEqual(["user_message", "route_decision", "turn_failed"]);
    expect(parts.at(-1)).toMatchObject({ type: "turn-error", error: { code: "budget_exceeded" } });
  });

  it("fails, recorded, a turn whose program names a kind the edge does not know", async () => {
    const harness = withProgram({ steps: [{ kind: "no-such-step" }], stop: { maxSteps: 4 } });
    const { parts, store, scripted } = await runTurn(harness, ["Paris."]);
    expect(scripted.calls.route).toHaveLength(0);
    expect(store.events.map((e) => e.type)).toEqual(["user_message", "route_decision", "turn_failed"]);
    const failed = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-error" }>;
    expect(failed.error.code).toBe("engine_failure");
    expect(failed.error.message).toMatch(/unknown step kind "no-such-step"/);
  });
});
