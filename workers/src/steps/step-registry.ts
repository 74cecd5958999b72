import { z } from "zod";
import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import { readTurnProgram, type TurnStop } from "../../../schema/harness/harness-settings.ts";
import { answerStep } from "./answer-step.ts";
import { genuiCheckStep } from "./genui-check-step.ts";
import { outputCheckStep } from "./output-check-step.ts";
import { routeStep } from "./route-step.ts";
import type { StepKind } from "./step-kind.ts";
import { summaryStep } from "./summary-step.ts";

/** The step kinds a harness program may name, by kind. */
export type StepRegistry = ReadonlyMap<string, StepKind>;

export function createStepRegistry(kinds: readonly StepKind[]): StepRegistry {
  return new Map(kinds.map((kind) => [kind.kind, kind]));
}

/** Every step kind the edge knows. A new kind: its concept file in this folder, and one entry here. */
export const DEFAULT_STEP_KINDS: StepRegistry = createStepRegistry([
  routeStep,
  answerStep,
  genuiCheckStep,
  outputCheckStep,
  summaryStep,
]);

/** One step of a resolved program: its kind's definition and its options, parsed. */
export interface ResolvedStep {
  name: string;
  kind: StepKind;
  options: unknown;
  background: boolean;
}

export interface ResolvedProgram {
  /** In order; the turn loop runs these on the turn's critical path. */
  critical: ResolvedStep[];
  /** In order, after the client's response has ended. */
  background: ResolvedStep[];
  stop: TurnStop;
}

/** A harness program that names an unknown step kind, bad options, or a `goto` target that is not a step. */
export class TurnProgramError extends Error {
  override name = "TurnProgramError";
  readonly path: string[];
  constructor(path: string[], message: string) {
    super(`harness turn program, at ${path.join(".")}: ${message}`);
    this.path = path;
  }
}

const resolved = new WeakMap<HarnessDocument, WeakMap<StepRegistry, ResolvedProgram>>();

/**
 * The harness's turn program against the registry: every kind known, every step's options valid under its kind's
 * schema. Throws {@link TurnProgramError} naming the first bad step. Kept per (harness, registry) pair.
 */
export function resolveTurnProgram(harness: HarnessDocument, registry: StepRegistry): ResolvedProgram {
  let byRegistry = resolved.get(harness);
  const hit = byRegistry?.get(registry);
  if (hit) return hit;
  const program = readTurnProgram(harness);
  const steps = program.steps.map((step, index): ResolvedStep => {
    const kind = registry.get(step.kind);
    if (!kind) {
      throw new TurnProgramError(
        ["turn", "steps", String(index), "kind"],
        `unknown step kind "${step.kind}" (known: ${[...registry.keys()].join(", ")})`,
      );
    }
    const options = kind.options.safeParse(step.options ?? {});
    if (!options.success) {
      throw new TurnProgramError(["turn", "steps", String(index), "options"], z.prettifyError(options.error));
    }
    return {
      name: step.name ?? step.kind,
      kind,
      options: options.data,
      background: step.background === true,
    };
  });
  const result = {
    critical: steps.filter((step) => !step.background),
    background: steps.filter((step) => step.background),
    stop: program.stop,
  };
  if (!byRegistry) resolved.set(harness, (byRegistry = new WeakMap()));
  byRegistry.set(registry, result);
  return result;
}
