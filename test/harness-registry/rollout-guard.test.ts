import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_GUARD_SETTINGS,
  decideRollout,
  describeRollback,
  harnessGuardSettingsSchema,
  type ArmCounts,
} from "../../workers/src/harness-registry/rollout-guard.ts";

/** A seeded uniform generator (mulberry32): the simulations below are the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * One rollout: turns alternate between the arms (each arm failing at its own rate), the rule asked after every
 * turn as the guard asks it; the canary turn at which it rolled back, or undefined.
 */
function simulate(seed: number, pProduction: number, pCanary: number, turns: number): number | undefined {
  const next = random(seed);
  const production: ArmCounts = { turns: 0, failures: 0 };
  const canary: ArmCounts = { turns: 0, failures: 0 };
  for (let i = 0; i < 2 * turns; i++) {
    const arm = i % 2 === 0 ? production : canary;
    arm.turns += 1;
    if (next() < (arm === canary ? pCanary : pProduction)) arm.failures += 1;
    if (decideRollout(production, canary).rollBack) return canary.turns;
  }
  return undefined;
}

describe("the rollout guard's rule (one-sided SPRT)", () => {
  it("has the stated defaults; out-of-range settings are refused", () => {
    expect(DEFAULT_GUARD_SETTINGS).toEqual({
      enabled: true,
      alpha: 0.01,
      beta: 0.05,
      delta: 0.2,
      floor: 0.05,
      minTurns: 5,
    });
    for (const bad of [{ alpha: 0 }, { alpha: 0.5 }, { beta: 1 }, { delta: 0 }, { minTurns: 0 }, { x: 1 }])
      expect(harnessGuardSettingsSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  it("rolls back a canary whose every turn fails at its fifth turn (clean production), not before", () => {
    const clean = { turns: 20, failures: 0 };
    for (let n = 0; n < 5; n++) expect(decideRollout(clean, { turns: n, failures: n }).rollBack).toBe(false);
    const decision = decideRollout(clean, { turns: 5, failures: 5 });
    expect(decision.rollBack).toBe(true);
    expect(decision.p0).toBe(0.05);
    expect(decision.llr).toBeCloseTo(5 * Math.log(5), 10);
    expect(decision.boundary).toBeCloseTo(Math.log(95), 10);
    expect(describeRollback(decision)).toBe(
      "guard: SPRT rolled back the canary (llr 8.047 >= 4.554; canary 5/5 failed, production 0/20; p0 0.050, p1 0.250)",
    );
    // With no production turns yet the floor stands in for it.
    expect(decideRollout({ turns: 0, failures: 0 }, { turns: 5, failures: 5 }).rollBack).toBe(true);
    expect(
      decideRollout(clean, { turns: 5, failures: 5 }, { ...DEFAULT_GUARD_SETTINGS, enabled: false }).rollBack,
    ).toBe(false);
  });

  it("never rolls back a canary with no failures, and more failures never weaken the case", () => {
    fc.assert(
      fc.property(
        fc.nat(1_000),
        fc.nat(1_000),
        fc.nat(1_000),
        fc.nat(1_000),
        (pTurns, pFailRaw, cTurns, cFailRaw) => {
          const production = { turns: pTurns, failures: pTurns === 0 ? 0 : pFailRaw % (pTurns + 1) };
          const failures = cTurns === 0 ? 0 : cFailRaw % (cTurns + 1);
          expect(decideRollout(production, { turns: cTurns, failures: 0 }).rollBack).toBe(false);
          if (failures < cTurns) {
            const worse = decideRollout(production, { turns: cTurns, failures: failures + 1 });
            const now = decideRollout(production, { turns: cTurns, failures });
            expect(worse.llr).toBeGreaterThan(now.llr);
            if (now.rollBack) expect(worse.rollBack).toBe(true);
          }
        },
      ),
    );
  });

  it("rarely rolls back a canary as good as production (within α/(1−β) over 300 turns each)", () => {
    for (const p of [0, 0.02, 0.05, 0.1, 0.3]) {
      const runs = 400;
      let alarms = 0;
      for (let seed = 1; seed <= runs; seed++) if (simulate(seed * 7919, p, p, 300) !== undefined) alarms++;
      // α/(1−β) ≈ 0.0105 where p0 is the true rate; production's own estimate adds noise: allow 3×.
      expect(alarms / runs, `p = ${p}`).toBeLessThanOrEqual(0.035);
    }
  });

  it("rolls back a canary whose every turn fails at turn max(minTurns, ⌈boundary / ln(p1/p0)⌉)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000 }), fc.nat(2_000), (turns, failuresRaw) => {
        const production = { turns, failures: turns === 0 ? 0 : failuresRaw % (turns + 1) };
        const { p0, p1, boundary } = decideRollout(production, { turns: 0, failures: 0 });
        const stated = Math.max(DEFAULT_GUARD_SETTINGS.minTurns, Math.ceil(boundary / Math.log(p1 / p0)));
        let at = 0;
        while (!decideRollout(production, { turns: at, failures: at }).rollBack) at++;
        expect(at).toBe(stated);
        // A clean production (or none yet): the floor, so the fifth turn.
        if (production.failures === 0) expect(at).toBe(5);
      }),
    );
  });

  it("rolls back a canary δ worse than production with probability at least 1 − β in the long run", () => {
    let caught = 0;
    const runs = 200;
    for (let seed = 1; seed <= runs; seed++)
      if (simulate(seed * 104_729, 0.05, 0.3, 400) !== undefined) caught++;
    expect(caught / runs).toBeGreaterThanOrEqual(0.95);
  });
});
