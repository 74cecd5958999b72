/**
 * The JSON Schema subset molmesh can decode under a grammar: what OpenAI's strict mode accepts, cut down to what
 * node-llama-cpp's `GbnfJsonSchema` can constrain (no `pattern`, no `format`, no `multipleOf`, no additional
 * properties). `required` may leave properties out (OpenAI accepts that without `strict`): every property is
 * decoded all the same, and an object with all of them is valid under the schema; `checkStrictSchema` (strict-schema.ts)
 * holds a `strict: true` schema to OpenAI's stricter rules. A schema passes {@link checkJsonSchemaSubset} or is refused naming the
 * first keyword that is not in the subset, with its JSON pointer; {@link validateJsonValue} checks output
 * against it. Numeric bounds are the one part a grammar holds only in part (see `numberGrammar` in
 * json-schema-convert.ts): sign, digit count and small integer ranges are exact, other bounds are not.
 * Annotations (`title`, `description`, `default`, `examples`, `$schema`) are accepted and constrain nothing.
 *
 * Hand-written rather than a validator library: the subset is ours and small, the checker must name the
 * unsupported keyword (a general validator accepts it), and this runs unchanged in workerd and Node.
 */
import { integerRange, numberRange } from "./number-range.ts";

/** Deepest nesting of subschemas (the root is depth 1). */
export const MAX_SCHEMA_DEPTH = 8;
/** Most subschemas in one schema, all levels together. */
export const MAX_SCHEMA_NODES = 512;
/** Largest schema, as JSON text in UTF-16 code units. */
export const MAX_SCHEMA_CHARS = 64 * 1024;
/** Largest `maxLength`/`maxItems`: llama.cpp unrolls bounded repetitions into rules. */
export const MAX_REPETITION_BOUND = 4096;
export const MAX_ENUM_VALUES = 256;
export const MAX_PROPERTY_NAME_CHARS = 128;

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonPrimitiveType = "string" | "number" | "integer" | "boolean" | "null";

interface Annotated {
  description?: string;
  title?: string;
  default?: JsonValue;
  examples?: JsonValue[];
  $schema?: string;
}
export type ObjectSchema = Annotated & {
  type: "object";
  properties: Record<string, SubsetSchema>;
  required?: string[];
  additionalProperties?: false;
};
export type ArraySchema = Annotated & {
  type: "array";
  items: SubsetSchema;
  minItems?: number;
  maxItems?: number;
};
export type StringSchema = Annotated & { type: "string"; minLength?: number; maxLength?: number };
/** Bounds as JSON Schema 2020-12 spells them (numbers, not draft 4's boolean `exclusiveMinimum`). */
export type NumberSchema = Annotated & {
  type: "number" | "integer";
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
};
/** `boolean`, `null`, or a list of primitive types (a list carries no other keyword). */
export type PrimitiveSchema = Annotated & { type: "boolean" | "null" | JsonPrimitiveType[] };
export type EnumSchema = Annotated & {
  enum: JsonPrimitive[];
  type?: JsonPrimitiveType | JsonPrimitiveType[];
};
export type ConstSchema = Annotated & {
  const: JsonPrimitive;
  type?: JsonPrimitiveType | JsonPrimitiveType[];
};
export type AnyOfSchema = Annotated & { anyOf: SubsetSchema[] };
/** A schema that passed {@link checkJsonSchemaSubset}. */
export type SubsetSchema =
  | ObjectSchema
  | ArraySchema
  | StringSchema
  | NumberSchema
  | PrimitiveSchema
  | EnumSchema
  | ConstSchema
  | AnyOfSchema;

/**
 * Why a schema is refused. `keyword` is what the edge names in its 400 (`unsupported_keyword`), `pointer` the
 * RFC 6901 location of the offending subschema or keyword.
 */
export interface SchemaIssue {
  code: "unsupported_keyword" | "invalid_schema" | "schema_too_deep" | "schema_too_large";
  keyword: string | null;
  pointer: string;
  message: string;
}

export type SchemaCheck = { ok: true; schema: SubsetSchema } | { ok: false; issue: SchemaIssue };

const TEXT_ANNOTATIONS = ["description", "title", "$schema"] as const;
const ANNOTATIONS: readonly string[] = [...TEXT_ANNOTATIONS, "default", "examples"];
const NUMBER_BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const;
const PRIMITIVE_TYPES: readonly string[] = ["string", "number", "integer", "boolean", "null"];
const KEYWORDS_BY_TYPE: Record<string, readonly string[]> = {
  object: ["type", "properties", "required", "additionalProperties"],
  array: ["type", "items", "minItems", "maxItems"],
  string: ["type", "minLength", "maxLength"],
  number: ["type", ...NUMBER_BOUNDS],
  integer: ["type", ...NUMBER_BOUNDS],
  boolean: ["type"],
  null: ["type"],
};

export const escapePointer = (token: string): string => token.replaceAll("~", "~0").replaceAll("/", "~1");
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isPrimitive = (value: unknown): value is JsonPrimitive =>
  value === null || ["string", "boolean"].includes(typeof value) || Number.isFinite(value);

class SchemaRefusal extends Error {
  constructor(readonly issue: SchemaIssue) {
    super(issue.message);
  }
}

function refuse(code: SchemaIssue["code"], keyword: string | null, pointer: string, message: string): never {
  throw new SchemaRefusal({ code, keyword, pointer, message });
}

interface Walk {
  nodes: number;
}

function checkBound(node: Record<string, unknown>, keyword: string, pointer: string): void {
  const bound = node[keyword];
  if (bound === undefined) return;
  if (!Number.isInteger(bound) || (bound as number) < 0 || (bound as number) > MAX_REPETITION_BOUND) {
    refuse(
      "invalid_schema",
      keyword,
      `${pointer}/${keyword}`,
      `${keyword} must be an integer in 0..${MAX_REPETITION_BOUND}`,
    );
  }
}

function checkOrder(node: Record<string, unknown>, min: string, max: string, pointer: string): void {
  const low = node[min];
  const high = node[max];
  if (typeof low === "number" && typeof high === "number" && low > high) {
    refuse("invalid_schema", max, `${pointer}/${max}`, `${max} is below ${min}`);
  }
}

function checkKeywords(node: Record<string, unknown>, allowed: readonly string[], pointer: string): void {
  for (const key of Object.keys(node)) {
    if (!allowed.includes(key) && !ANNOTATIONS.includes(key)) {
      refuse("unsupported_keyword", key, `${pointer}/${escapePointer(key)}`, `"${key}" is not supported`);
    }
  }
  for (const annotation of TEXT_ANNOTATIONS) {
    if (annotation in node && typeof node[annotation] !== "string") {
      refuse("invalid_schema", annotation, `${pointer}/${annotation}`, `${annotation} must be a string`);
    }
  }
  if ("examples" in node && !Array.isArray(node["examples"]))
    refuse("invalid_schema", "examples", `${pointer}/examples`, "examples must be an array");
}

/** Each bound a finite number, and some value left between them (an integer one, for integers). */
function checkNumberBounds(node: Record<string, unknown>, pointer: string): void {
  for (const keyword of NUMBER_BOUNDS) {
    if (keyword in node && !Number.isFinite(node[keyword])) {
      refuse("invalid_schema", keyword, `${pointer}/${keyword}`, `${keyword} must be a finite number`);
    }
  }
  const range = numberRange(node);
  const empty =
    node["type"] === "integer"
      ? integerRange(range) === null
      : range.low > range.high || (range.low === range.high && (range.lowOpen || range.highOpen));
  if (empty) refuse("invalid_schema", "maximum", pointer, "no value lies between the bounds");
}

/** `type` as a list of primitive names (a list of types is only allowed for primitives). */
function readPrimitiveTypes(type: unknown, pointer: string): string[] {
  const list = Array.isArray(type) ? type : [type];
  if (list.length === 0 || list.some((t) => typeof t !== "string" || !PRIMITIVE_TYPES.includes(t))) {
    refuse(
      "invalid_schema",
      "type",
      `${pointer}/type`,
      "a list of types may only name string, number, integer, boolean, null",
    );
  }
  return list as string[];
}

function matchesPrimitiveType(value: JsonPrimitive, type: string): boolean {
  if (type === "null") return value === null;
  if (type === "integer") return Number.isInteger(value);
  return typeof value === type;
}

function checkLiterals(node: Record<string, unknown>, keyword: "enum" | "const", pointer: string): void {
  checkKeywords(node, [keyword, "type"], pointer);
  const values = keyword === "enum" ? node["enum"] : [node["const"]];
  if (!Array.isArray(values) || values.length === 0 || values.length > MAX_ENUM_VALUES) {
    refuse("invalid_schema", keyword, `${pointer}/${keyword}`, `enum must list 1..${MAX_ENUM_VALUES} values`);
  }
  values.forEach((value: unknown, i) => {
    if (!isPrimitive(value)) {
      const at = keyword === "enum" ? `${pointer}/enum/${i}` : `${pointer}/const`;
      refuse("invalid_schema", keyword, at, `${keyword} values must be strings, numbers, booleans or null`);
    }
  });
  if ("type" in node) {
    const types = readPrimitiveTypes(node["type"], pointer);
    const stray = (values as JsonPrimitive[]).findIndex(
      (v) => !types.some((t) => matchesPrimitiveType(v, t)),
    );
    if (stray >= 0)
      refuse(
        "invalid_schema",
        keyword,
        `${pointer}/${keyword}`,
        `${keyword} value ${stray} does not match type`,
      );
  }
}

function checkObject(node: Record<string, unknown>, pointer: string, depth: number, walk: Walk): void {
  checkKeywords(node, KEYWORDS_BY_TYPE["object"] ?? [], pointer);
  const properties = node["properties"];
  if (!isRecord(properties)) {
    refuse(
      "invalid_schema",
      "properties",
      `${pointer}/properties`,
      "an object schema needs properties (may be empty)",
    );
  }
  const names = Object.keys(properties);
  for (const name of names) {
    if (name.length === 0 || name.length > MAX_PROPERTY_NAME_CHARS) {
      refuse(
        "invalid_schema",
        "properties",
        `${pointer}/properties/${escapePointer(name)}`,
        `property names must be 1..${MAX_PROPERTY_NAME_CHARS} characters`,
      );
    }
    checkNode(properties[name], `${pointer}/properties/${escapePointer(name)}`, depth + 1, walk);
  }
  const required = node["required"];
  if (required !== undefined) {
    const list: unknown[] = Array.isArray(required) ? required : [];
    const bad =
      !Array.isArray(required) ||
      list.some((name, i) => typeof name !== "string" || !names.includes(name) || list.indexOf(name) !== i);
    if (bad) {
      refuse(
        "invalid_schema",
        "required",
        `${pointer}/required`,
        "required must list distinct names of properties",
      );
    }
  }
  const additional = node["additionalProperties"];
  if (additional !== undefined && additional !== false) {
    refuse(
      "unsupported_keyword",
      "additionalProperties",
      `${pointer}/additionalProperties`,
      "additionalProperties must be false",
    );
  }
}

function checkNode(node: unknown, pointer: string, depth: number, walk: Walk): void {
  if (depth > MAX_SCHEMA_DEPTH)
    refuse("schema_too_deep", null, pointer, `schemas may nest at most ${MAX_SCHEMA_DEPTH} levels`);
  if (++walk.nodes > MAX_SCHEMA_NODES)
    refuse("schema_too_large", null, pointer, `schemas may hold at most ${MAX_SCHEMA_NODES} subschemas`);
  if (!isRecord(node)) refuse("invalid_schema", null, pointer, "a schema must be a JSON object");
  if ("enum" in node || "const" in node) {
    checkLiterals(node, "enum" in node ? "enum" : "const", pointer);
    return;
  }
  if ("anyOf" in node) {
    checkKeywords(node, ["anyOf"], pointer);
    const options = node["anyOf"];
    if (!Array.isArray(options) || options.length === 0)
      refuse("invalid_schema", "anyOf", `${pointer}/anyOf`, "anyOf must list at least one schema");
    options.forEach((option: unknown, i) => {
      checkNode(option, `${pointer}/anyOf/${i}`, depth + 1, walk);
    });
    return;
  }
  const type = node["type"];
  if (type === undefined) {
    const first = Object.keys(node).find((key) => !ANNOTATIONS.includes(key));
    if (first !== undefined)
      refuse(
        "unsupported_keyword",
        first,
        `${pointer}/${escapePointer(first)}`,
        `"${first}" is not supported`,
      );
    refuse("invalid_schema", "type", pointer, "a schema needs type, enum, const or anyOf");
  }
  if (Array.isArray(type)) {
    readPrimitiveTypes(type, pointer);
    checkKeywords(node, ["type"], pointer);
    return;
  }
  const allowed = typeof type === "string" ? KEYWORDS_BY_TYPE[type] : undefined;
  if (allowed === undefined)
    refuse("invalid_schema", "type", `${pointer}/type`, `unknown type ${JSON.stringify(type)}`);
  if (type === "object") {
    checkObject(node, pointer, depth, walk);
    return;
  }
  checkKeywords(node, allowed, pointer);
  if (type === "array") {
    if (!("items" in node)) refuse("invalid_schema", "items", pointer, "an array schema needs items");
    checkBound(node, "minItems", pointer);
    checkBound(node, "maxItems", pointer);
    checkOrder(node, "minItems", "maxItems", pointer);
    checkNode(node["items"], `${pointer}/items`, depth + 1, walk);
  } else if (type === "string") {
    checkBound(node, "minLength", pointer);
    checkBound(node, "maxLength", pointer);
    checkOrder(node, "minLength", "maxLength", pointer);
  } else if (type === "number" || type === "integer") {
    checkNumberBounds(node, pointer);
  }
}

/**
 * Checks that `schema` is in the subset and, with `rootObject`, that its root is an object schema (OpenAI's rule
 * for `json_schema` formats and function parameters). Returns the first issue in document order.
 */
export function checkJsonSchemaSubset(schema: unknown, options: { rootObject?: boolean } = {}): SchemaCheck {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  if (text === undefined)
    return refusal({ code: "invalid_schema", keyword: null, pointer: "", message: "schema is not JSON" });
  if (text.length > MAX_SCHEMA_CHARS) {
    return refusal({
      code: "schema_too_large",
      keyword: null,
      pointer: "",
      message: `schemas may be at most ${MAX_SCHEMA_CHARS} characters of JSON`,
    });
  }
  try {
    checkNode(schema, "", 1, { nodes: 0 });
  } catch (error) {
    if (error instanceof SchemaRefusal) return refusal(error.issue);
    throw error;
  }
  if (options.rootObject && !(isRecord(schema) && schema["type"] === "object")) {
    return refusal({
      code: "invalid_schema",
      keyword: "type",
      pointer: "",
      message: 'the root schema must be {"type": "object", …}',
    });
  }
  return { ok: true, schema: schema as SubsetSchema };
}

function refusal(issue: SchemaIssue): SchemaCheck {
  return { ok: false, issue };
}

/** Human wording of an issue, as the edge puts it in a 400's message. */
export function describeSchemaIssue(issue: SchemaIssue, where = "schema"): string {
  const at = issue.pointer === "" ? where : `${where} at ${issue.pointer}`;
  return issue.keyword === null
    ? `${at}: ${issue.message}`
    : `${at}: keyword "${issue.keyword}": ${issue.message}`;
}
