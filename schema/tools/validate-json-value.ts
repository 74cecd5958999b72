import type { SubsetSchema } from "./json-schema-subset.ts";
import { numberRange } from "./number-range.ts";

/** Where a value fails its schema: RFC 6901 pointer into the value, and why. */
export interface ValueIssue {
  pointer: string;
  message: string;
}

const escapePointer = (token: string): string => token.replaceAll("~", "~0").replaceAll("/", "~1");
const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value;

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    default:
      return typeof value === type;
  }
}

/** Code points, the unit llama.cpp's grammar counts string length in. */
const countCodePoints = (text: string): number => Array.from(text).length;

function validateAt(schema: SubsetSchema, value: unknown, pointer: string): ValueIssue | null {
  if ("enum" in schema) {
    return schema.enum.some((option) => option === value)
      ? null
      : { pointer, message: "not one of the enum values" };
  }
  if ("const" in schema) return schema.const === value ? null : { pointer, message: "not the const value" };
  if ("anyOf" in schema) {
    return schema.anyOf.some((option) => validateAt(option, value, pointer) === null)
      ? null
      : { pointer, message: "matches none of anyOf" };
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.some((type) => matchesType(value, type))) {
    return { pointer, message: `expected ${types.join(" or ")}, got ${describe(value)}` };
  }
  if (schema.type === "object") {
    const record = value as Record<string, unknown>;
    const stray = Object.keys(record).find((key) => !Object.hasOwn(schema.properties, key));
    if (stray !== undefined)
      return { pointer: `${pointer}/${escapePointer(stray)}`, message: "property not in the schema" };
    for (const [name, property] of Object.entries(schema.properties)) {
      const at = `${pointer}/${escapePointer(name)}`;
      if (!Object.hasOwn(record, name)) return { pointer: at, message: "required property missing" };
      const issue = validateAt(property, record[name], at);
      if (issue) return issue;
    }
    return null;
  }
  if (schema.type === "array") {
    const items = value as unknown[];
    if (schema.minItems !== undefined && items.length < schema.minItems)
      return { pointer, message: `fewer than ${schema.minItems} items` };
    if (schema.maxItems !== undefined && items.length > schema.maxItems)
      return { pointer, message: `more than ${schema.maxItems} items` };
    for (const [i, item] of items.entries()) {
      const issue = validateAt(schema.items, item, `${pointer}/${i}`);
      if (issue) return issue;
    }
    return null;
  }
  if (schema.type === "string") {
    const length = countCodePoints(value as string);
    if (schema.minLength !== undefined && length < schema.minLength)
      return { pointer, message: `shorter than ${schema.minLength}` };
    if (schema.maxLength !== undefined && length > schema.maxLength)
      return { pointer, message: `longer than ${schema.maxLength}` };
  }
  if (schema.type === "number" || schema.type === "integer") {
    const number = value as number;
    const { low, lowOpen, high, highOpen } = numberRange(schema);
    if (number < low || (lowOpen && number === low))
      return { pointer, message: `below the ${lowOpen ? "exclusive " : ""}minimum ${low}` };
    if (number > high || (highOpen && number === high))
      return { pointer, message: `above the ${highOpen ? "exclusive " : ""}maximum ${high}` };
  }
  return null;
}

/**
 * The first place `value` breaks `schema`, or null when it validates. The subset's rules hold: every property
 * is required and no other property is allowed.
 */
export function validateJsonValue(schema: SubsetSchema, value: unknown): ValueIssue | null {
  return validateAt(schema, value, "");
}
