import { z } from "zod";
import { checkJsonSchemaSubset, describeSchemaIssue } from "../tools/json-schema-subset.ts";
import { checkStrictSchema } from "../tools/strict-schema.ts";
import { MAX_TOOLS, toolNameSchema } from "../wire/v2/index.ts";

/**
 * What a specialist's answers are decoded under when the request asks for nothing (`specialists.<label>.output`), and
 * what it may do with the function tools a request offers (`specialists.<label>.tools`). Both only narrow or fill in
 * the decoding constraint of the answer hop (workers/src/steps/answer-constraint.ts); the views keep showing what the
 * request sent, so they stay a function of the timeline.
 */

/**
 * Largest grammar a harness may carry, in UTF-16 code units: well under the wire's own cap, since the whole document
 * is read for every turn and stored in the registry (256 KiB of canonical JSON at most).
 */
export const MAX_OUTPUT_GRAMMAR_CHARS = 16_384;

/**
 * A JSON schema in the subset the nodes decode under (schema/tools/json-schema-subset.ts), its root an object; with
 * `strict`, held to OpenAI's strict rules too, as the API holds a request's. Kept as written: the wire constraint is
 * built from it per turn, so the document's canonical JSON is exactly what its author sent.
 */
const outputSchemaField = z.record(z.string(), z.unknown());

const jsonSchemaOutputSchema = z
  .strictObject({
    format: z.literal("json_schema"),
    /** The format's name as the wire and the API spell it; absent: `output`. */
    name: toolNameSchema.optional(),
    schema: outputSchemaField,
    strict: z.boolean().optional(),
  })
  .superRefine((output, ctx) => {
    const check = checkJsonSchemaSubset(output.schema, { rootObject: true });
    if (!check.ok) {
      ctx.addIssue({ code: "custom", path: ["schema"], message: describeSchemaIssue(check.issue) });
      return;
    }
    const strictIssue = output.strict === true ? checkStrictSchema(check.schema) : null;
    if (strictIssue) ctx.addIssue({ code: "custom", path: ["schema"], message: strictIssue.message });
  });

export const specialistOutputSchema = z.discriminatedUnion("format", [
  z.strictObject({ format: z.literal("json_object") }),
  jsonSchemaOutputSchema,
  z.strictObject({
    format: z.literal("grammar"),
    /** GBNF (llama.cpp's format) with a `root` rule; nodes that list `output:grammar` decode under it. */
    grammar: z
      .string()
      .min(1)
      .max(MAX_OUTPUT_GRAMMAR_CHARS)
      .regex(/^\s*root\s*::=/m, "a GBNF grammar must define its root rule (`root ::= …`)"),
  }),
]);
export type SpecialistOutput = z.infer<typeof specialistOutputSchema>;

/**
 * What the specialist may do with the request's function tools: `auto` as the request says, `none` answer in text
 * (the tools are not decoded under), `required` call one of them. `allow` restricts the callable tools to these
 * names; a request whose callable tools are all outside it is answered as under `none`.
 */
export const specialistToolPolicySchema = z.strictObject({
  mode: z.enum(["auto", "none", "required"]),
  allow: z
    .array(toolNameSchema)
    .min(1)
    .max(MAX_TOOLS)
    .refine((names) => new Set(names).size === names.length, "tool names must be unique")
    // Said in the JSON Schema too (the API's OpenAPI document), where a refinement does not reach.
    .meta({ uniqueItems: true })
    .optional(),
});
export type SpecialistToolPolicy = z.infer<typeof specialistToolPolicySchema>;
