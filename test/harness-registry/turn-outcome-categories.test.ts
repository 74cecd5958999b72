import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import type { TurnOutcome } from "../../workers/src/harness-registry/guard-rollout.ts";
import { defineStep } from "../../workers/src/steps/step-kind.ts";
import { DEFAULT_STEP_KINDS, createStepRegistry } from "../../workers/src/steps/step-registry.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import {
  META,
  MemoryConversationStore,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "../conversation/turn-loop-fixtures.ts";

/**
 * Through the real turn loop: a labelled turn's outcome reaches the rollout guard with the categories of its steps'
 * verdicts. The step kind here stands in for an output check: it appends `step` events with `verdict` and
 * `data: { check, valid }`, as that contract has them.
 */

const toyOutputCheck = defineStep({
  kind: "toy-output-check",
  options: z.strictObject({ check: z.enum(["json_output", "tool_arguments", "other"]), valid: z.boolean() }),
  run(ctx, options) {
    ctx.append({
      type: "step",
      turnId: ctx.turn.turnId,
      step: ctx.step,
      kind: "toy-output-check",
      verdict: options.valid ? "pass" : "fail",
      data: { check: options.check, valid: options.valid },
    });
    return Promise.resolve(undefined);
  },
});

const KINDS = createStepRegistry([...DEFAULT_STEP_KINDS.values(), toyOutputCheck]);

const check = (name: string, options: { check: string; valid: boolean }) => ({
  kind: "toy-output-check",
  name,
  options,
});

async function outcomeOf(checks: ReturnType<typeof check>[]): Promise<TurnOutcome[]> {
  const harness: HarnessDocument = harnessDocumentSchema.parse({
    ...DEFAULT_HARNESS,
    turn: { steps: [{ kind: "route" }, { kind: "answer" }, ...checks], stop: { maxSteps: 8 } },
  });
  const outcomes: TurnOutcome[] = [];
  const scripted = createScriptedHops({});
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, {
    steps: KINDS,
    chooseHarness: () =>
      Promise.resolve({
        harness,
        harnessHash: "sha256:canary",
        choice: { label: "production", arm: "canary", source: "label" },
      }),
    rollout: {
      record: (outcome) => {
        outcomes.push(outcome);
        return Promise.resolve();
      },
      recordFeedback: () => Promise.resolve(false),
    },
  });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const result = turns.startTurn({ conversationId: META.id, text: "Give me JSON." });
  if (!result.ok) throw new Error(result.refusal.code);
  await collectParts(result.stream);
  await turns.afterTurns(() => Promise.resolve());
  return outcomes;
}

describe("a labelled turn's outcome for the rollout guard", () => {
  it("carries each failed check's category, once, in order; the answer stands", async () => {
    const outcomes = await outcomeOf([
      check("tools", { check: "tool_arguments", valid: false }),
      check("json", { check: "json_output", valid: false }),
      check("json-again", { check: "json_output", valid: false }),
      check("other", { check: "other", valid: false }),
    ]);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({
      harnessHash: "sha256:canary",
      choice: { label: "production", arm: "canary" },
      failures: ["json_output_invalid", "tool_arguments_invalid", "check_failed"],
    });
  });

  it("carries no failure for a turn whose checks pass", async () => {
    const outcomes = await outcomeOf([check("json", { check: "json_output", valid: true })]);
    expect(outcomes.map((o) => o.failures)).toEqual([[]]);
  });
});
