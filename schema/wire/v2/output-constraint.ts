import { z } from "zod";
import {
  checkJsonSchemaSubset,
  describeSchemaIssue,
  type SubsetSchema,
} from "../../tools/json-schema-subset.ts";

/**
 * How an answer's output is constrained. Each engine decodes under a grammar built from it, so the output
 * always parses (and, for schemas, validates): `json_schema` (Responses `text.format` strict, Chat
 * `response_format`), `json_object` (any JSON object), or `tools` (plain text or function calls, see
 * schema/tools/tool-call-text.ts). Schemas must be in the subset of schema/tools/json-schema-subset.ts; the
 * edge refuses others with a 400 naming the keyword, and a node refuses them as `bad_request`.
 */

/** OpenAI's rule for function and format names. */
export const toolNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "names are 1-64 of A-Z a-z 0-9 _ -");
export const MAX_TOOLS = 128;

/** A JSON schema in the subset; invalid ones fail with the checker's wording (keyword and pointer). */
const subsetSchema = z.unknown().transform((value, ctx): SubsetSchema => {
  const check = checkJsonSchemaSubset(value, { rootObject: true });
  if (check.ok) return check.schema;
  ctx.addIssue({ code: "custom", message: describeSchemaIssue(check.issue), params: { issue: check.issue } });
  return z.NEVER;
});

export const toolDefinitionSchema = z.object({
  name: toolNameSchema,
  description: z.string().max(4096).optional(),
  parameters: subsetSchema,
});
export type ToolDefinition = z.infer<typeof toolDefinitionSchema>;

export const toolChoiceSchema = z.union([z.enum(["auto", "required"]), z.object({ name: toolNameSchema })]);

export const jsonSchemaConstraintSchema = z.object({
  type: z.literal("json_schema"),
  name: toolNameSchema,
  schema: subsetSchema,
});

export const jsonObjectConstraintSchema = z.object({ type: z.literal("json_object") });

export const toolsConstraintSchema = z
  .object({
    type: z.literal("tools"),
    tools: z.array(toolDefinitionSchema).min(1).max(MAX_TOOLS),
    choice: toolChoiceSchema.default("auto"),
    /** More than one call in one answer (OpenAI `parallel_tool_calls`). */
    parallel: z.boolean().default(false),
    /**
     * A JSON format sent with the tools (the Agents SDK does, for an agent with tools and an output type):
     * under `auto` an answer that is not a call is JSON valid under it; `required` or a named tool ignore it.
     */
    format: jsonSchemaConstraintSchema.omit({ type: true }).optional(),
  })
  .superRefine((constraint, ctx) => {
    const names = constraint.tools.map((tool) => tool.name);
    const duplicate = names.find((name, i) => names.indexOf(name) !== i);
    if (duplicate !== undefined) {
      ctx.addIssue({ code: "custom", path: ["tools"], message: `two tools are named "${duplicate}"` });
    }
    const choice = constraint.choice;
    if (typeof choice === "object" && !names.includes(choice.name)) {
      ctx.addIssue({
        code: "custom",
        path: ["choice"],
        message: `choice names "${choice.name}", not in tools`,
      });
    }
  });

export const outputConstraintSchema = z.discriminatedUnion("type", [
  jsonSchemaConstraintSchema,
  jsonObjectConstraintSchema,
  toolsConstraintSchema,
]);
export type OutputConstraint = z.infer<typeof outputConstraintSchema>;
export type OutputConstraintInput = z.input<typeof outputConstraintSchema>;
export type ToolsConstraint = z.infer<typeof toolsConstraintSchema>;

/** One function call of a finished answer; `arguments` is JSON text that validates against the tool's schema. */
export const toolCallSchema = z.object({
  id: z.string().min(1).max(64),
  name: toolNameSchema,
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof toolCallSchema>;
