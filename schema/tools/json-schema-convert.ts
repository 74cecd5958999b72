import {
  MAX_ENUM_VALUES,
  type JsonPrimitive,
  type JsonPrimitiveType,
  type JsonValue,
  type NumberSchema,
  type SubsetSchema,
} from "./json-schema-subset.ts";
import { integerRange, numberRange } from "./number-range.ts";

/**
 * The same subset schema in each engine's dialect. node-llama-cpp reads its own `GbnfJsonSchema` (every
 * property required, `oneOf` for alternatives); vLLM (xgrammar) and llama-server read standard JSON Schema,
 * which gets the subset's implicit rules spelled out so they constrain exactly what llama.cpp does.
 */

/** Structurally node-llama-cpp's `GbnfJsonSchema`, restricted to the subset (schema/ cannot import it). */
export type GbnfJsonSchemaShape =
  | { readonly type: JsonPrimitiveType | readonly JsonPrimitiveType[]; readonly description?: string }
  | {
      readonly type: "string";
      readonly minLength?: number;
      readonly maxLength?: number;
      readonly description?: string;
    }
  | { readonly const: JsonPrimitive; readonly description?: string }
  | { readonly enum: readonly JsonPrimitive[]; readonly description?: string }
  | { readonly oneOf: readonly GbnfJsonSchemaShape[]; readonly description?: string }
  | {
      readonly type: "object";
      readonly properties: { readonly [key: string]: GbnfJsonSchemaShape };
      readonly additionalProperties: false;
      readonly description?: string;
    }
  | {
      readonly type: "array";
      readonly items: GbnfJsonSchemaShape;
      readonly minItems?: number;
      readonly maxItems?: number;
      readonly description?: string;
    };

const withDescription = <T extends object>(shape: T, schema: SubsetSchema): T =>
  schema.description === undefined ? shape : { ...shape, description: schema.description };

/** The numeric keywords that are set, without `undefined` holes (exactOptionalPropertyTypes). */
function pickBounds<K extends string>(bounds: Record<K, number | undefined>): Partial<Record<K, number>> {
  return Object.fromEntries(Object.entries(bounds).filter(([, value]) => value !== undefined)) as Partial<
    Record<K, number>
  >;
}

/** Digits of the largest integer that stays a safe integer whatever its digits are (10^15 − 1 < 2^53 − 1). */
export const SAFE_INTEGER_DIGITS = 15;
/** node-llama-cpp's own cap on a number's integer digits. */
const NUMBER_DIGITS = 16;

/**
 * What llama.cpp's grammar can hold of a bounded number: its sign, and how many digits its integer part has.
 * `GbnfJsonSchema` has no numeric bounds, so such a number travels as a string const spelling this spec (see
 * {@link NUMBER_SENTINEL}) that the llama engine swaps for the rule (gpu-nodes' constraint-grammars.ts).
 */
export interface NumberGrammarSpec {
  integer: boolean;
  sign: "any" | "nonNegative" | "positive";
  /** Most digits before the point. */
  digits: number;
  /** An exponent lets a value leave a two-sided range, so bounded numbers have none. */
  exponent: boolean;
}

/** Starts with a private-use character, so no caller's const is mistaken for it. */
export const NUMBER_SENTINEL = "\uE000molmesh-number:";

const digitsOf = (n: number): number => String(Math.floor(Math.abs(n))).length;

/**
 * How a bounded number is decoded under a grammar. A small integer range is an enum (exact). Otherwise the
 * grammar holds the sign (a lower bound ≥ 0) and the digit count (two-sided bounds, and at most 15 for
 * integers, so `z.int()`'s ±(2^53 − 1) is exact); the rest of a bound (`maximum: 100` admits 999, a lower
 * bound of 5 admits 0) is not held by the grammar, and the node's final check refuses such an output.
 */
export function numberGrammar(schema: NumberSchema): { enum: number[] } | NumberGrammarSpec | null {
  const range = numberRange(schema);
  if (range.low === -Infinity && range.high === Infinity) return null;
  const integer = schema.type === "integer";
  const ints = integer ? integerRange(range) : null;
  if (ints && ints.max - ints.min < MAX_ENUM_VALUES) {
    return { enum: Array.from({ length: ints.max - ints.min + 1 }, (_, i) => ints.min + i) };
  }
  const positive = integer ? (ints?.min ?? 0) >= 1 : range.low > 0 || (range.low === 0 && range.lowOpen);
  const sign = positive ? "positive" : range.low >= 0 ? "nonNegative" : "any";
  const cap = integer ? SAFE_INTEGER_DIGITS : NUMBER_DIGITS;
  const twoSided = Number.isFinite(range.low) && Number.isFinite(range.high);
  const digits = twoSided ? Math.min(cap, Math.max(digitsOf(range.low), digitsOf(range.high))) : cap;
  return { integer, sign, digits, exponent: !integer && !twoSided };
}

export const encodeNumberSentinel = (spec: NumberGrammarSpec): string =>
  `${NUMBER_SENTINEL}${spec.integer ? "integer" : "number"}:${spec.sign}:${spec.digits}:${spec.exponent ? "e" : "-"}`;

export function toGbnfJsonSchema(schema: SubsetSchema): GbnfJsonSchemaShape {
  if ("enum" in schema) return withDescription({ enum: schema.enum }, schema);
  if ("const" in schema) return withDescription({ const: schema.const }, schema);
  if ("anyOf" in schema) return withDescription({ oneOf: schema.anyOf.map(toGbnfJsonSchema) }, schema);
  if (schema.type === "object") {
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, value]) => [name, toGbnfJsonSchema(value)]),
    );
    return withDescription({ type: "object", properties, additionalProperties: false }, schema);
  }
  if (schema.type === "array") {
    const items = toGbnfJsonSchema(schema.items);
    return withDescription(
      { type: "array", items, ...pickBounds({ minItems: schema.minItems, maxItems: schema.maxItems }) },
      schema,
    );
  }
  if (schema.type === "string") {
    return withDescription(
      { type: "string", ...pickBounds({ minLength: schema.minLength, maxLength: schema.maxLength }) },
      schema,
    );
  }
  if (schema.type === "number" || schema.type === "integer") {
    const grammar = numberGrammar(schema);
    if (grammar === null) return withDescription({ type: schema.type }, schema);
    return withDescription("enum" in grammar ? grammar : { const: encodeNumberSentinel(grammar) }, schema);
  }
  return withDescription({ type: schema.type }, schema);
}

/** Standard JSON Schema with every property required and no additional properties, for vLLM and llama-server. */
export function toStrictJsonSchema(schema: SubsetSchema): { [key: string]: JsonValue } {
  if ("anyOf" in schema) return { ...schema, anyOf: schema.anyOf.map(toStrictJsonSchema) };
  if ("enum" in schema || "const" in schema) return { ...schema };
  if (schema.type === "object") {
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, value]) => [name, toStrictJsonSchema(value)]),
    );
    return { ...schema, properties, required: Object.keys(properties), additionalProperties: false };
  }
  if (schema.type === "array") return { ...schema, items: toStrictJsonSchema(schema.items) };
  return { ...schema };
}
