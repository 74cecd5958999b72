import type { SpecialistSettings } from "../../../schema/harness/harness-settings.ts";
import type { SpecialistOutput, SpecialistToolPolicy } from "../../../schema/harness/specialist-output.ts";
import {
  outputConstraintSchema,
  type OutputConstraint,
  type ToolsConstraint,
} from "../../../schema/wire/v2/index.ts";
import type { AnswerConstraint } from "../generate/stream-text.ts";

/** The name a harness `json_schema` output goes by on the wire when it names none. */
const DEFAULT_OUTPUT_NAME = "output";

/**
 * The constraint a specialist's answer is decoded under: the request's own (its tools, narrowed by the specialist's
 * tool policy, or its JSON format) and, where that leaves none, the specialist's `output`. A pure function of the
 * request and the harness, so a repair step that answers again decodes under the same constraint.
 */
export function answerConstraintFor(
  requested: OutputConstraint | undefined,
  specialist: SpecialistSettings,
): AnswerConstraint | undefined {
  const narrowed =
    requested?.type === "tools" && specialist.tools
      ? applyToolPolicy(requested, specialist.tools)
      : requested;
  if (narrowed !== undefined) return narrowed;
  return specialist.output && harnessOutputConstraint(specialist.output);
}

/**
 * The request's tools constraint under the policy: only `allow`ed tools stay callable; `none`, or no callable tool
 * left (a named choice outside `allow` included), leaves the request's JSON format, if any, or free text; `required`
 * turns the request's `auto` into a call of one of them (a named choice stays: it is stricter).
 */
function applyToolPolicy(
  constraint: ToolsConstraint,
  policy: SpecialistToolPolicy,
): OutputConstraint | undefined {
  const allowed = policy.allow && new Set(policy.allow);
  const tools = allowed ? constraint.tools.filter((tool) => allowed.has(tool.name)) : constraint.tools;
  const { choice } = constraint;
  const namedGone = typeof choice === "object" && !tools.some((tool) => tool.name === choice.name);
  if (policy.mode === "none" || tools.length === 0 || namedGone) {
    const { format } = constraint;
    return format && { type: "json_schema", name: format.name, schema: format.schema };
  }
  return {
    ...constraint,
    tools,
    choice: policy.mode === "required" && choice === "auto" ? "required" : choice,
  };
}

/** Wire constraints built from harness outputs, per output object (a harness is parsed once and kept). */
const built = new WeakMap<SpecialistOutput, AnswerConstraint>();

function harnessOutputConstraint(output: SpecialistOutput): AnswerConstraint {
  const hit = built.get(output);
  if (hit) return hit;
  const constraint: AnswerConstraint =
    output.format === "grammar"
      ? { type: "grammar", gbnf: output.grammar }
      : output.format === "json_object"
        ? { type: "json_object" }
        : // The harness schema checked the subset already; the wire's parse only types it.
          outputConstraintSchema.parse({
            type: "json_schema",
            name: output.name ?? DEFAULT_OUTPUT_NAME,
            schema: output.schema,
          });
  built.set(output, constraint);
  return constraint;
}
