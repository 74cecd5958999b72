import { z } from "@hono/zod-openapi";
import type { ViewTool } from "../../../../schema/harness/tools-block.ts";
import {
  checkJsonSchemaSubset,
  describeSchemaIssue,
  type SchemaIssue,
  type SubsetSchema,
} from "../../../../schema/tools/json-schema-subset.ts";
import { relaxJsonSchema } from "../../../../schema/tools/relax-schema.ts";
import { checkStrictSchema } from "../../../../schema/tools/strict-schema.ts";
import {
  MAX_TOOLS,
  outputConstraintSchema,
  toolNameSchema,
  type OutputConstraint,
  type OutputConstraintInput,
} from "../../../../schema/wire/v2/index.ts";

/**
 * Function calling and structured outputs as both public APIs spell them, and what they become: the tools the
 * specialist's view shows (schema/harness/tools-block.ts) and the output constraint its answer is decoded
 * under (schema/wire/v2/output-constraint.ts). The engine always decodes under the grammar built from a schema, so
 * its structure must be in molmesh's subset whatever `strict` says (a 400 naming the keyword otherwise); without
 * `strict: true`, value hints the grammar cannot hold (`format`, `pattern`, …) are dropped first, as OpenAI takes
 * such schemas as guidance (schema/tools/relax-schema.ts). Optional properties are accepted
 * unless `strict: true` (as OpenAI does) and decoded as if required: an object with every property is valid
 * under the schema, and a grammar that may skip properties would need one branch per subset of them.
 */

/**
 * A schema in the subset. `$schema` at the root is dropped first: JSON-schema generators (zod-to-json-schema,
 * the AI SDK) add it, and it constrains nothing. Documented as OpenAI documents it, a JSON object; which
 * keywords the subset takes is the checker's to say (a 400 naming the keyword), not the OpenAPI document's.
 */
const subsetSchemaField = z
  .record(z.string(), z.unknown())
  .transform((value, ctx): SubsetSchema => {
    const { $schema: _ignored, ...stripped } = value;
    const relaxed = relaxJsonSchema(stripped);
    const check = checkJsonSchemaSubset(relaxed.schema, { rootObject: true });
    if (check.ok) {
      if (relaxed.dropped) relaxedAway.set(check.schema, relaxed.dropped);
      return check.schema;
    }
    ctx.addIssue({ code: "custom", message: describeSchemaIssue(check.issue) });
    return z.NEVER;
  })
  .openapi({
    description:
      "A JSON Schema (type object). Without strict, value hints a grammar cannot hold (format, pattern, multipleOf, …) " +
      "are dropped; structure must be in molmesh's decodable subset (OpenAI's strict-mode keywords). With strict: " +
      "true, OpenAI's strict rules and the subset as it is.",
  });

/**
 * What {@link relaxJsonSchema} dropped from a schema, by the schema it became: a `strict: true` tool or format is
 * refused for it (the relaxation is for schemas sent as guidance; a strict one is a contract).
 */
const relaxedAway = new WeakMap<SubsetSchema, SchemaIssue>();

/**
 * `strict: true` holds a schema to OpenAI's strict rules (every property required, no additional ones), with
 * OpenAI's 400 wording; without it the subset alone applies.
 */
function refineStrict(key: "parameters" | "schema", what: (name: string) => string) {
  return (
    value: { name: string; strict?: boolean | null | undefined; [field: string]: unknown },
    ctx: z.RefinementCtx,
  ): void => {
    const schema = value[key] as SubsetSchema | undefined;
    if (value.strict !== true || schema === undefined) return;
    const dropped = relaxedAway.get(schema);
    if (dropped) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `Invalid schema for ${what(value.name)}: ${describeSchemaIssue(dropped)}`,
      });
      return;
    }
    const issue = checkStrictSchema(schema);
    if (issue) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `Invalid schema for ${what(value.name)}: ${issue.message}`,
      });
    }
  };
}
const strictFunction = refineStrict("parameters", (name) => `function '${name}'`);
const strictFormat = refineStrict("schema", (name) => `response_format '${name}'`);

const EMPTY_PARAMETERS: SubsetSchema = { type: "object", properties: {}, additionalProperties: false };

/** A function tool's fields, shared by both APIs' shapes. */
const functionFields = {
  name: toolNameSchema,
  description: z.string().max(4096).optional(),
  parameters: subsetSchemaField.optional(),
  strict: z.boolean().nullable().optional(),
};

/** Responses: `{type: "function", name, parameters, strict}`. */
export const responseToolSchema = z
  .strictObject({ type: z.literal("function"), ...functionFields })
  .superRefine(strictFunction);
/** Chat Completions: `{type: "function", function: {name, parameters, strict}}`. */
export const chatToolSchema = z.strictObject({
  type: z.literal("function"),
  function: z.strictObject(functionFields).superRefine(strictFunction),
});
export type ResponseTool = z.infer<typeof responseToolSchema>;
type FunctionFields = z.infer<typeof responseToolSchema>;

const choiceModes = z.enum(["none", "auto", "required"]);
export const responseToolChoiceSchema = z.union([
  choiceModes,
  z.strictObject({ type: z.literal("function"), name: toolNameSchema }),
]);
export const chatToolChoiceSchema = z.union([
  choiceModes,
  z.strictObject({ type: z.literal("function"), function: z.strictObject({ name: toolNameSchema }) }),
]);
export type ResponseToolChoice = z.infer<typeof responseToolChoiceSchema>;

const formatFields = {
  name: toolNameSchema,
  description: z.string().max(4096).optional(),
  schema: subsetSchemaField,
  strict: z.boolean().nullable().optional(),
};
/** Responses `text.format`. */
export const responseTextFormatSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({ type: z.literal("json_schema"), ...formatFields }).superRefine(strictFormat),
]);
/** Chat `response_format`. */
export const chatResponseFormatSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    json_schema: z.strictObject(formatFields).superRefine(strictFormat),
  }),
]);
export type ResponseTextFormat = z.infer<typeof responseTextFormatSchema>;

export const toolListSchema = <T extends z.ZodType>(tool: T) => z.array(tool).max(MAX_TOOLS);

/** The same request in one shape, whichever API it came in on. */
export interface OutputRequest {
  tools: FunctionFields[];
  /** Absent: `auto` when there are tools. */
  choice?: "none" | "auto" | "required" | { name: string } | undefined;
  parallel?: boolean | undefined;
  format?: ResponseTextFormat | undefined;
}

export function fromChatTools(
  tools: Array<z.infer<typeof chatToolSchema>> | undefined,
  choice: z.infer<typeof chatToolChoiceSchema> | undefined,
): Pick<OutputRequest, "tools" | "choice"> {
  return {
    tools: (tools ?? []).map((tool) => ({ type: "function", ...tool.function })),
    choice: typeof choice === "object" ? { name: choice.function.name } : choice,
  };
}

export function fromResponseChoice(choice: ResponseToolChoice | undefined): OutputRequest["choice"] {
  return typeof choice === "object" ? { name: choice.name } : choice;
}

export function fromChatFormat(
  format: z.infer<typeof chatResponseFormatSchema> | undefined,
): ResponseTextFormat | undefined {
  return format?.type === "json_schema" ? { type: "json_schema", ...format.json_schema } : format;
}

type IssueAt = (path: PropertyKey[], message: string) => void;

/**
 * OpenAI's cross-field rules, named at their param: two tools with one name, a choice naming a tool not in
 * `tools` (or any choice but none/auto without tools). Tools with a `json_schema` format are one constraint
 * (see {@link toOutputConstraint}); tools with `json_object` are refused: the grammar that would decode either
 * is not built yet, and refusing beats ignoring one of them.
 */
export function checkOutputRequest(
  request: OutputRequest,
  paths: {
    tools: string;
    choice: PropertyKey[];
    format: PropertyKey[];
    toolName: (i: number) => PropertyKey[];
  },
  issue: IssueAt,
): void {
  const names = request.tools.map((tool) => tool.name);
  names.forEach((name, i) => {
    if (names.indexOf(name) !== i) issue(paths.toolName(i), `two tools are named '${name}'`);
  });
  const { choice } = request;
  if (typeof choice === "object" && !names.includes(choice.name))
    issue(paths.choice, `Tool choice '${choice.name}' not found in '${paths.tools}'.`);
  if (choice === "required" && names.length === 0)
    issue(paths.choice, `tool_choice 'required' needs at least one tool in '${paths.tools}'`);
  const calls = names.length > 0 && choice !== "none";
  if (calls && request.format?.type === "json_object")
    issue(paths.format, "json_object together with tools is not supported: send json_schema, or one of them");
}

/** The tools as the views show them (in the order sent; the block sorts them). */
export function toViewTools(request: OutputRequest): ViewTool[] {
  return request.tools.map((tool) => ({
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: { ...(tool.parameters ?? EMPTY_PARAMETERS) },
  }));
}

/**
 * The constraint the answer is decoded under. `tools` with `auto` lets the model choose text or a call, and
 * that choice is itself constrained: the node's grammar is `root ::= text | "<tool_call>" call`, where text
 * may not start with `<` (gpu-nodes/src/engine/llama/constraint-grammars.ts), so the first decoded character
 * decides and everything after it is held to that branch; with a `json_schema` format that text branch is the
 * format's JSON (OpenAI's semantics: a call, or a final answer in the format). `required` or a named tool
 * must call, so the format plays no part; `none` (or no tools) leaves the format alone, or free text.
 */
export function toOutputConstraint(request: OutputRequest): OutputConstraintInput | undefined {
  const { choice } = request;
  if (request.tools.length > 0 && choice !== "none") {
    return {
      type: "tools",
      tools: request.tools.map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.parameters ?? EMPTY_PARAMETERS,
      })),
      choice: choice ?? "auto",
      // OpenAI's default is true; one call per answer when the client says false, and always for a named tool
      // ("forced function": exactly one call of that function, in OpenAI's docs).
      parallel: typeof choice === "object" ? false : (request.parallel ?? true),
      ...(request.format?.type === "json_schema"
        ? { format: { name: request.format.name, schema: request.format.schema } }
        : {}),
    };
  }
  const format = request.format;
  if (format?.type === "json_schema")
    return { type: "json_schema", name: format.name, schema: format.schema };
  if (format?.type === "json_object") return { type: "json_object" };
  return undefined;
}

/** What a turn request carries: the tools for the views and the parsed constraint (absent when neither). */
export function readTurnOutput(request: OutputRequest): {
  tools?: ViewTool[];
  constraint?: OutputConstraint;
} {
  const input = toOutputConstraint(request);
  const tools = toViewTools(request);
  return {
    ...(tools.length > 0 ? { tools } : {}),
    ...(input === undefined ? {} : { constraint: outputConstraintSchema.parse(input) }),
  };
}
