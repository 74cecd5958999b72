import { z } from "zod";
import { checkAnswerOutput } from "./answer-output-checks.ts";
import { defineStep } from "./step-kind.ts";

/**
 * The output check: after the answer, whether it holds to what it was decoded under (answer-output-checks.ts). One
 * `step` event per check it ran, its verdict `pass` or `fail` and `data: {check, valid, errors?}`; none for an answer
 * with no JSON or tools constraint. A `fail` counts the turn as failed for the rollout guard, while the answer stands:
 * the client already has it, or gets it as it is when the turn ends.
 */
export const outputCheckStep = defineStep({
  kind: "output-check",
  options: z.strictObject({}),
  run(ctx) {
    const { turn } = ctx;
    if (!turn.answer) return Promise.resolve(undefined);
    for (const check of checkAnswerOutput(turn.answer, turn.answerConstraint)) {
      ctx.append({
        type: "step",
        turnId: turn.turnId,
        step: ctx.step,
        kind: "output-check",
        verdict: check.valid ? "pass" : "fail",
        data: { ...check },
      });
    }
    return Promise.resolve(undefined);
  },
});
