import { describe, expect, it } from "vitest";
import {
  GUARD_ACTOR,
  createRolloutGuard,
  type RollbackNotice,
} from "../../workers/src/harness-registry/guard-rollout.ts";
import type {
  ArmTally,
  HarnessLabel,
  HarnessRegistryStore,
  RolloutCounts,
} from "../../workers/src/harness-registry/harness-registry-store.ts";
import {
  emptyCategoryCounts,
  type FailureCategory,
} from "../../workers/src/harness-registry/turn-failures.ts";

const PROD = "sha256:" + "a".repeat(64);
const CANARY = "sha256:" + "b".repeat(64);

type GuardStore = Pick<
  HarnessRegistryStore,
  "getLabel" | "recordRolloutOutcome" | "recordRolloutFeedback" | "rollBackCanary"
>;

/**
 * A label with a canary, its counts, counted turns and moves in memory, as the D1 store keeps them: a turn counts
 * once by id; negative feedback counts once per counted turn, a failure only for a turn that was none.
 */
function createStore() {
  let label: HarnessLabel = {
    tenantId: "dev",
    name: "production",
    harness: PROD,
    canary: { harness: CANARY, percent: 50 },
    guard: null,
    revision: 1,
    updatedBy: "key",
    updatedAt: 0,
  };
  const counts = new Map<string, ArmTally>();
  const turns = new Map<string, { key: string; failed: boolean; feedback: boolean }>();
  const moves: { reason: string; actor: string; action: string }[] = [];
  const read = (key: string): ArmTally =>
    counts.get(key) ?? { turns: 0, failures: 0, categories: emptyCategoryCounts() };
  const both = (canaryHarness: string): RolloutCounts => ({
    production: read(`${canaryHarness}/production`),
    canary: read(`${canaryHarness}/canary`),
  });
  const store: GuardStore = {
    getLabel: (_tenant, name) => Promise.resolve(name === label.name ? label : undefined),
    recordRolloutOutcome: (o) => {
      const key = `${o.canaryHarness}/${o.arm}`;
      if (!turns.has(o.turnId)) {
        const now = read(key);
        const categories = { ...now.categories };
        for (const category of o.failures) categories[category] += 1;
        const failed = o.failures.length > 0;
        counts.set(key, { turns: now.turns + 1, failures: now.failures + (failed ? 1 : 0), categories });
        turns.set(o.turnId, { key, failed, feedback: false });
      }
      return Promise.resolve(both(o.canaryHarness));
    },
    recordRolloutFeedback: (f) => {
      const key = `${f.canaryHarness}/${f.arm}`;
      const turn = turns.get(f.turnId);
      if (!turn || turn.key !== key || turn.feedback) return Promise.resolve(undefined);
      const now = read(key);
      counts.set(key, {
        turns: now.turns,
        failures: now.failures + (turn.failed ? 0 : 1),
        categories: { ...now.categories, feedback_negative: now.categories.feedback_negative + 1 },
      });
      turns.set(f.turnId, { key, failed: true, feedback: true });
      return Promise.resolve(both(f.canaryHarness));
    },
    rollBackCanary: (m) => {
      if (label.canary?.harness !== m.canaryHarness) return Promise.resolve(undefined);
      label = { ...label, canary: null, revision: label.revision + 1, updatedBy: m.actor };
      moves.push({ reason: m.reason, actor: m.actor, action: m.audit.action });
      return Promise.resolve(label);
    },
  };
  return { moves, counts, read, label: () => label, store };
}

let nextTurn = 0;
const choice = (arm: "production" | "canary", label = "production") => ({
  label,
  arm,
  source: "label" as const,
});
const turn = (
  arm: "production" | "canary",
  failures: FailureCategory[] = [],
  label = "production",
  turnId = `t${++nextTurn}`,
) => ({
  tenantId: "dev",
  turnId,
  harnessHash: arm === "canary" ? CANARY : PROD,
  choice: choice(arm, label),
  failures,
});
const feedback = (arm: "production" | "canary", turnId: string) => ({
  tenantId: "dev",
  turnId,
  harnessHash: arm === "canary" ? CANARY : PROD,
  choice: choice(arm),
});

function createGuard(memory: ReturnType<typeof createStore>, notices: RollbackNotice[] = []) {
  return createRolloutGuard({
    store: memory.store,
    now: () => 1_000_000,
    rolledBack: (notice) => {
      notices.push(notice);
      return Promise.resolve();
    },
  });
}

describe("the rollout guard, wired", () => {
  it("counts each arm, rolls a failing canary back once at its fifth turn, and tells of it once", async () => {
    const memory = createStore();
    const notices: RollbackNotice[] = [];
    const guard = createGuard(memory, notices);
    for (let i = 0; i < 3; i++) await guard.record(turn("production"));
    for (let i = 0; i < 4; i++) await guard.record(turn("canary", ["turn_failed"]));
    expect(memory.label().canary).not.toBeNull();
    await guard.record(turn("canary", ["turn_failed"]));
    expect(memory.label().canary).toBeNull();
    expect(memory.moves).toEqual([
      {
        reason: expect.stringMatching(/^guard: SPRT/) as string,
        actor: GUARD_ACTOR,
        action: "harness_label.rolled_back",
      },
    ]);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.decision.canary).toMatchObject({ turns: 5, failures: 5 });
    // Later turns (stale arms) count for nothing: the label has no canary.
    await guard.record(turn("canary", ["turn_failed"]));
    expect(notices).toHaveLength(1);
    expect(memory.read(`${CANARY}/canary`)).toMatchObject({ turns: 5, failures: 5 });
  });

  it("ignores turns no label chose, another version than the label's, and keeps a canary that answers", async () => {
    const memory = createStore();
    const guard = createGuard(memory);
    await guard.record({
      ...turn("canary", ["turn_failed"]),
      choice: { label: null, arm: null, source: "default" },
    });
    await guard.record({ ...turn("canary", ["turn_failed"]), harnessHash: PROD });
    await guard.record(turn("canary", ["turn_failed"], "other"));
    expect(memory.counts.size).toBe(0);
    for (let i = 0; i < 50; i++) await guard.record(turn("canary"));
    expect(memory.label().canary).not.toBeNull();
  });

  it("counts each category beside the total, a turn once however many categories it hits", async () => {
    const memory = createStore();
    const guard = createGuard(memory);
    await guard.record(turn("production", ["genui_rejected", "json_output_invalid"]));
    await guard.record(turn("production", ["tool_arguments_invalid", "check_failed"]));
    await guard.record(turn("production"));
    const production = memory.read(`${CANARY}/production`);
    expect(production).toMatchObject({ turns: 3, failures: 2 });
    expect(production.categories).toEqual({
      turn_failed: 0,
      genui_rejected: 1,
      json_output_invalid: 1,
      tool_arguments_invalid: 1,
      check_failed: 1,
      feedback_negative: 0,
    });
  });
});

describe("negative feedback in the rollout guard", () => {
  it("counts the first negative feedback on a counted turn as a failure, a second on it as nothing", async () => {
    const memory = createStore();
    const guard = createGuard(memory);
    await guard.record(turn("canary", [], "production", "good"));
    expect(await guard.recordFeedback(feedback("canary", "good"))).toBe(true);
    expect(await guard.recordFeedback(feedback("canary", "good"))).toBe(false);
    const canary = memory.read(`${CANARY}/canary`);
    expect(canary).toMatchObject({ turns: 1, failures: 1 });
    expect(canary.categories.feedback_negative).toBe(1);
  });

  it("adds the category but no second failure to a turn that failed already", async () => {
    const memory = createStore();
    const guard = createGuard(memory);
    await guard.record(turn("canary", ["check_failed"], "production", "bad"));
    expect(await guard.recordFeedback(feedback("canary", "bad"))).toBe(true);
    expect(memory.read(`${CANARY}/canary`)).toMatchObject({
      turns: 1,
      failures: 1,
      categories: { check_failed: 1, feedback_negative: 1 },
    });
  });

  it("does not count feedback on a turn not counted, or on a label moved since", async () => {
    const memory = createStore();
    const guard = createGuard(memory);
    // Never counted (it ran before the canary, or no label chose it).
    expect(await guard.recordFeedback(feedback("production", "unknown"))).toBe(false);
    expect(
      await guard.recordFeedback({
        ...feedback("canary", "x"),
        choice: { label: null, arm: null, source: "default" },
      }),
    ).toBe(false);
    // Counted, but the feedback names another arm's version than the label's now.
    await guard.record(turn("canary", [], "production", "c1"));
    expect(await guard.recordFeedback({ ...feedback("canary", "c1"), harnessHash: PROD })).toBe(false);
    expect(memory.read(`${CANARY}/canary`)).toMatchObject({ turns: 1, failures: 0 });
  });

  it("rolls back a canary whose answers pass every check but users reject", async () => {
    const memory = createStore();
    const notices: RollbackNotice[] = [];
    const guard = createGuard(memory, notices);
    for (let i = 0; i < 3; i++) await guard.record(turn("production"));
    const ids = ["n1", "n2", "n3", "n4", "n5"];
    for (const id of ids) await guard.record(turn("canary", [], "production", id));
    expect(memory.label().canary).not.toBeNull();
    for (const id of ids) await guard.recordFeedback(feedback("canary", id));
    expect(memory.label().canary).toBeNull();
    expect(notices).toHaveLength(1);
    // 4 rejected of 5: llr 4·ln 5 + ln(0.75/0.95) ≈ 6.20 ≥ ln 95 ≈ 4.55 (3 of 5 is 4.36, short of it).
    expect(notices[0]?.decision.canary).toMatchObject({
      turns: 5,
      failures: 4,
      categories: { feedback_negative: 4 },
    });
  });
});
