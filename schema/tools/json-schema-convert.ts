import type { JsonPrimitive, JsonPrimitiveType, JsonValue, SubsetSchema } from "./json-schema-subset.ts";

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
