import { Validator, type OutputUnit } from "@cfworker/json-schema";
import type { ToolCall } from "../../../schema/wire/v2/index.ts";
import type { AnswerConstraint } from "../generate/stream-text.ts";

/**
 * Whether an answer holds to what it was decoded under, checked at the edge after the fact. The nodes' grammars make
 * a violation rare, but not impossible: an answer cut off by its token budget, an engine that holds a schema only in
 * part (numeric bounds, an OpenAI-compatible server), a node with a grammar bug. The result is a verdict for the
 * rollout guard and for harness search; the answer itself stands either way.
 *
 * Schemas are checked with `@cfworker/json-schema`, a full JSON Schema validator (2020-12) that builds no code at run
 * time, so it runs in workerd, where `eval` and `new Function` are refused (Ajv compiles schemas to functions).
 */

/** What a check looked at: the answer's JSON text, or its function calls' arguments. */
export type OutputCheckKind = "json_output" | "tool_arguments";

export interface OutputCheck {
  check: OutputCheckKind;
  valid: boolean;
  /** The first few problems, each clipped; absent when valid. */
  errors?: string[];
}

/** Most problems an event lists, and the longest one: the event is for a verdict, not a full report. */
export const MAX_CHECK_ERRORS = 5;
export const MAX_CHECK_ERROR_CHARS = 200;

/** The parts of an answer the checks read. */
export interface CheckedAnswer {
  text: string;
  toolCalls?: ToolCall[] | undefined;
}

/**
 * The checks the answer's constraint calls for, in order: `json_output` for a JSON answer (`json_object`,
 * `json_schema`, or the text branch of `tools` with a JSON format), `tool_arguments` for an answer that calls tools.
 * None for free text or a grammar (its grammar is the only statement of what is valid).
 */
export function checkAnswerOutput(
  answer: CheckedAnswer,
  constraint: AnswerConstraint | undefined,
): OutputCheck[] {
  switch (constraint?.type) {
    case "json_object":
      return [checkJsonText(answer.text, undefined)];
    case "json_schema":
      return [checkJsonText(answer.text, constraint.schema)];
    case "tools": {
      const calls = answer.toolCalls ?? [];
      if (calls.length > 0) return [checkToolArguments(calls, constraint.tools)];
      if (constraint.format) return [checkJsonText(answer.text, constraint.format.schema)];
      return [];
    }
    case "grammar":
    case undefined:
      return [];
  }
}

/** A JSON answer: it parses, is an object (both JSON modes ask for one), and validates under `schema` if any. */
function checkJsonText(text: string, schema: object | undefined): OutputCheck {
  const errors = jsonErrors(text, schema, "");
  return result("json_output", errors);
}

function checkToolArguments(
  calls: readonly ToolCall[],
  tools: ReadonlyArray<{ name: string; parameters: object }>,
): OutputCheck {
  const errors = calls.flatMap((call, index) => {
    const where = `call ${index} (${call.name})`;
    const tool = tools.find((candidate) => candidate.name === call.name);
    if (!tool) return [`${where}: not one of the offered tools`];
    return jsonErrors(call.arguments, tool.parameters, `${where} `);
  });
  return result("tool_arguments", errors);
}

function jsonErrors(text: string, schema: object | undefined, where: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return [`${where}not JSON: ${error instanceof Error ? error.message : String(error)}`];
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [`${where}not a JSON object`];
  if (schema === undefined) return [];
  const outcome = validatorFor(schema).validate(value);
  if (outcome.valid) return [];
  const leaves = outcome.errors.filter(isLeaf);
  return (leaves.length > 0 ? leaves : outcome.errors).map(
    (unit) => `${where}at ${unit.instanceLocation}: ${unit.error}`,
  );
}

/**
 * The validator reports each failing container (`properties`, `items`) as well as the failure inside it, and an
 * extra property twice; the inner, specific report is the one worth showing.
 */
const SUMMARY_KEYWORDS = new Set(["properties", "items", "prefixItems", "false"]);
const isLeaf = (unit: OutputUnit): boolean => !SUMMARY_KEYWORDS.has(unit.keyword);

function result(check: OutputCheckKind, errors: string[]): OutputCheck {
  if (errors.length === 0) return { check, valid: true };
  return { check, valid: false, errors: errors.slice(0, MAX_CHECK_ERRORS).map(clip) };
}

function clip(message: string): string {
  return message.length <= MAX_CHECK_ERROR_CHARS
    ? message
    : `${message.slice(0, MAX_CHECK_ERROR_CHARS - 1)}…`;
}

/** Validators per schema object: constraints are parsed once per turn (or once per harness) and reused. */
const validators = new WeakMap<object, Validator>();

function validatorFor(schema: object): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    // Not short-circuited: the event lists the first few problems, not only the first.
    validator = new Validator(schema, "2020-12", false);
    validators.set(schema, validator);
  }
  return validator;
}
