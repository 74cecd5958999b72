import { z } from "zod";

/**
 * The guarded rollout's rule: is a label's canary worse than its production version, on the turns each arm ran?
 * A turn is a failure when it failed (`turn_failed`), a check on its answer did (GenUI validation rejected, a
 * step's `fail` verdict) or its user said so (negative feedback): one failure however many of these it hits (the
 * categories are counted beside, turn-failures.ts). The rule is a one-sided Wald SPRT on the canary's failure rate:
 *
 * - H0: p = p0, where p0 is production's observed failure rate, never below `floor` (a small or perfect
 *   production sample does not make every canary failure damning); H1: p = p1 = p0 + `delta`.
 * - The log-likelihood ratio of the canary's counts, f·ln(p1/p0) + (n−f)·ln((1−p1)/(1−p0)), is compared with
 *   ln((1−β)/α); at or above it (and after `minTurns` canary turns) the canary is rolled back.
 * - There is no lower boundary: a harmless canary is watched for as long as it runs. The likelihood ratio is a
 *   martingale under H0, so by Ville's inequality the chance it ever reaches the boundary is at most α/(1−β)
 *   (when the canary's true rate is at most p0), however many turns it runs.
 *
 * With the defaults (α 0.01, β 0.05, δ 0.2, floor 0.05, 5 turns) and a clean production, each failed canary turn
 * adds ln 5 ≈ 1.61 against a boundary of ln 95 ≈ 4.55: a canary whose every turn fails is rolled back at its
 * fifth turn; a canary that never fails is never rolled back.
 */

export const harnessGuardSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe("False: the guard only counts."),
    alpha: z
      .number()
      .min(0.0001)
      .max(0.2)
      .default(0.01)
      .describe("The false-alarm rate: rolling back a canary no worse than production."),
    beta: z
      .number()
      .min(0.0001)
      .max(0.5)
      .default(0.05)
      .describe("The miss rate: keeping a canary `delta` worse than production."),
    delta: z
      .number()
      .min(0.01)
      .max(0.9)
      .default(0.2)
      .describe("How much higher a failure rate counts as worse."),
    floor: z
      .number()
      .min(0.001)
      .max(0.5)
      .default(0.05)
      .describe("The least failure rate assumed of production."),
    minTurns: z.int().min(1).max(100_000).default(5).describe("Canary turns before any rollback."),
  })
  .describe("The rollout guard: when the label's canary is rolled back by itself.");

export type HarnessGuardSettings = z.output<typeof harnessGuardSettingsSchema>;

export const DEFAULT_GUARD_SETTINGS: HarnessGuardSettings = harnessGuardSettingsSchema.parse({});

/** Turns and failed turns of one arm. */
export interface ArmCounts {
  turns: number;
  failures: number;
}

export interface RolloutDecision {
  rollBack: boolean;
  /** The canary's log-likelihood ratio, H1 against H0. */
  llr: number;
  /** ln((1−β)/α). */
  boundary: number;
  p0: number;
  p1: number;
  production: ArmCounts;
  canary: ArmCounts;
}

export function decideRollout(
  production: ArmCounts,
  canary: ArmCounts,
  settings: HarnessGuardSettings = DEFAULT_GUARD_SETTINGS,
): RolloutDecision {
  const observed = production.turns > 0 ? production.failures / production.turns : 0;
  // Two standard errors above the observed rate: production's own sampling noise must not read as the canary's
  // excess (a clean production sample adds nothing, the floor stands for it).
  const noise = production.turns > 0 ? 2 * Math.sqrt((observed * (1 - observed)) / production.turns) : 0;
  // Below 1 − δ, so that p1 < 1 and a canary success always counts against H1.
  const p0 = Math.min(Math.max(observed + noise, settings.floor), 1 - settings.delta - 1e-6);
  const p1 = p0 + settings.delta;
  const successes = canary.turns - canary.failures;
  const llr = canary.failures * Math.log(p1 / p0) + successes * Math.log((1 - p1) / (1 - p0));
  const boundary = Math.log((1 - settings.beta) / settings.alpha);
  const rollBack = settings.enabled && canary.turns >= settings.minTurns && llr >= boundary;
  return { rollBack, llr, boundary, p0, p1, production, canary };
}

/** The history entry's reason for a rollback: the statistic, the boundary and the evidence. */
export function describeRollback(decision: RolloutDecision): string {
  const { canary, production } = decision;
  return (
    `guard: SPRT rolled back the canary (llr ${decision.llr.toFixed(3)} >= ${decision.boundary.toFixed(3)}; ` +
    `canary ${canary.failures}/${canary.turns} failed, production ${production.failures}/${production.turns}; ` +
    `p0 ${decision.p0.toFixed(3)}, p1 ${decision.p1.toFixed(3)})`
  );
}
