import { describe, expect, it } from "vitest";
import {
  GUARD_ACTOR,
  createRolloutGuard,
  type RollbackNotice,
} from "../../workers/src/harness-registry/guard-rollout.ts";
import type { HarnessLabel } from "../../workers/src/harness-registry/harness-registry-store.ts";
import type { ArmCounts } from "../../workers/src/harness-registry/rollout-guard.ts";

const PROD = "sha256:" + "a".repeat(64);
const CANARY = "sha256:" + "b".repeat(64);

/** A label with a canary, its counts and its moves in memory, as the D1 store keeps them. */
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
  const counts = new Map<string, ArmCounts>();
  const moves: { reason: string; actor: string; action: string }[] = [];
  const read = (arm: string) => counts.get(arm) ?? { turns: 0, failures: 0 };
  return {
    moves,
    counts,
    label: () => label,
    store: {
      getLabel: (_tenant: string, name: string) => Promise.resolve(name === label.name ? label : undefined),
      recordRolloutOutcome: (o: { canaryHarness: string; arm: string; failed: boolean }) => {
        const key = `${o.canaryHarness}/${o.arm}`;
        const now = counts.get(key) ?? { turns: 0, failures: 0 };
        counts.set(key, { turns: now.turns + 1, failures: now.failures + (o.failed ? 1 : 0) });
        return Promise.resolve({
          production: read(`${o.canaryHarness}/production`),
          canary: read(`${o.canaryHarness}/canary`),
        });
      },
      rollBackCanary: (m: {
        canaryHarness: string;
        reason: string;
        actor: string;
        audit: { action: string };
      }) => {
        if (label.canary?.harness !== m.canaryHarness) return Promise.resolve(undefined);
        label = { ...label, canary: null, revision: label.revision + 1, updatedBy: m.actor };
        moves.push({ reason: m.reason, actor: m.actor, action: m.audit.action });
        return Promise.resolve(label);
      },
    },
  };
}

const turn = (arm: "production" | "canary", failed: boolean, label = "production") => ({
  tenantId: "dev",
  harnessHash: arm === "canary" ? CANARY : PROD,
  choice: { label, arm, source: "label" as const },
  failed,
});

describe("the rollout guard, wired", () => {
  it("counts each arm, rolls a failing canary back once at its fifth turn, and tells of it once", async () => {
    const memory = createStore();
    const notices: RollbackNotice[] = [];
    const guard = createRolloutGuard({
      store: memory.store,
      now: () => 1_000_000,
      rolledBack: (notice) => {
        notices.push(notice);
        return Promise.resolve();
      },
    });
    for (let i = 0; i < 3; i++) await guard.record(turn("production", false));
    for (let i = 0; i < 4; i++) await guard.record(turn("canary", true));
    expect(memory.label().canary).not.toBeNull();
    await guard.record(turn("canary", true));
    expect(memory.label().canary).toBeNull();
    expect(memory.moves).toEqual([
      {
        reason: expect.stringMatching(/^guard: SPRT/) as string,
        actor: GUARD_ACTOR,
        action: "harness_label.rolled_back",
      },
    ]);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.decision.canary).toEqual({ turns: 5, failures: 5 });
    // Later turns (stale arms) count for nothing: the label has no canary.
    await guard.record(turn("canary", true));
    expect(notices).toHaveLength(1);
    expect(memory.counts.get(`${CANARY}/canary`)).toEqual({ turns: 5, failures: 5 });
  });

  it("ignores turns no label chose, another version than the label's, and keeps a canary that answers", async () => {
    const memory = createStore();
    const guard = createRolloutGuard({
      store: memory.store,
      now: () => 0,
      rolledBack: () => Promise.resolve(),
    });
    await guard.record({ ...turn("canary", true), choice: { label: null, arm: null, source: "default" } });
    await guard.record({ ...turn("canary", true), harnessHash: PROD });
    await guard.record(turn("canary", true, "other"));
    expect(memory.counts.size).toBe(0);
    for (let i = 0; i < 50; i++) await guard.record(turn("canary", false));
    expect(memory.label().canary).not.toBeNull();
  });
});
