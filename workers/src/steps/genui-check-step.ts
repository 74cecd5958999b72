import { z } from "zod";
import { validateGenuiAnswer } from "../conversation/validate-genui-answer.ts";
import { readGenuiSettings } from "../../../schema/harness/harness-settings.ts";
import { defineStep } from "./step-kind.ts";

/**
 * The genui check: an answer of a label under the harness's GenUI contract (`genui`, by default the `genui` label) has
 * its component is validated by the edge validator and, when valid and the turn knows
 * its API origin, stored with a render link (validate-genui-answer.ts); its `genui_validation` event follows the
 * answer. Any other specialist's answer passes untouched.
 */
export const genuiCheckStep = defineStep({
  kind: "genui-check",
  options: z.strictObject({}),
  async run(ctx) {
    const { turn } = ctx;
    if (!turn.answer || turn.label === undefined) return undefined;
    const verdict = await validateGenuiAnswer(ctx.deps.genui, {
      genuiLabels: readGenuiSettings(ctx.deps.harness).labels,
      turnId: turn.turnId,
      tenantId: turn.tenantId,
      label: turn.label,
      text: turn.answer.text,
      apiOrigin: turn.apiOrigin,
    });
    if (verdict) ctx.append(verdict);
    return undefined;
  },
});
