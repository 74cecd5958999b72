import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkJsonSchemaSubset,
  describeSchemaIssue,
  MAX_SCHEMA_DEPTH,
  MAX_SCHEMA_NODES,
  type SubsetSchema,
} from "../../schema/tools/json-schema-subset.ts";
import { checkStrictSchema } from "../../schema/tools/strict-schema.ts";
import { z } from "zod";
import {
  encodeNumberSentinel,
  numberGrammar,
  toGbnfJsonSchema,
  toStrictJsonSchema,
} from "../../schema/tools/json-schema-convert.ts";
import { validateJsonValue } from "../../schema/tools/validate-json-value.ts";
import { WIRE_VERSION, generateRequestSchema, outputConstraintSchema } from "../../schema/wire/v2/index.ts";
import { objectSchemaArb, subsetSchemaArb } from "./schema-arbitrary.ts";

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

function issueOf(schema: unknown) {
  const check = checkJsonSchemaSubset(schema, { rootObject: true });
  if (check.ok) throw new Error("expected a refusal");
  return check.issue;
}

describe("the JSON schema subset checker", () => {
  it.each([
    ["pattern", object({ a: { type: "string", pattern: "^x" } }), "/properties/a/pattern"],
    ["multipleOf", object({ n: { type: "number", multipleOf: 2 } }), "/properties/n/multipleOf"],
    ["format", object({ d: { type: "string", format: "date" } }), "/properties/d/format"],
    ["$ref", object({ r: { $ref: "#/$defs/x" } }), "/properties/r/$ref"],
    ["oneOf", object({ o: { oneOf: [{ type: "string" }] } }), "/properties/o/oneOf"],
    ["allOf", object({ o: { type: "object", properties: {}, allOf: [] } }), "/properties/o/allOf"],
    [
      "prefixItems",
      object({ l: { type: "array", items: { type: "string" }, prefixItems: [] } }),
      "/properties/l/prefixItems",
    ],
    [
      "additionalProperties",
      object({ a: { type: "string" } }, { additionalProperties: true }),
      "/additionalProperties",
    ],
    ["not", object({ "a/b": { not: {} } }), "/properties/a~1b/not"],
  ])("names %s with its pointer", (keyword, schema, pointer) => {
    const issue = issueOf(schema);
    expect(issue).toMatchObject({ code: "unsupported_keyword", keyword, pointer });
    expect(describeSchemaIssue(issue)).toContain(`"${keyword}"`);
  });

  it("refuses a schema past the depth limit, and accepts one at it", () => {
    const nest = (levels: number): unknown =>
      levels === 1 ? { type: "string" } : object({ x: nest(levels - 1) });
    expect(checkJsonSchemaSubset(nest(MAX_SCHEMA_DEPTH)).ok).toBe(true);
    const deep = issueOf(nest(MAX_SCHEMA_DEPTH + 1));
    expect(deep.code).toBe("schema_too_deep");
    expect(deep.pointer).toBe("/properties/x".repeat(MAX_SCHEMA_DEPTH));
  });

  it("refuses schemas past the node and size limits", () => {
    const wide = object(
      Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES }, (_, i) => [`p${i}`, { type: "null" }])),
    );
    expect(issueOf(wide).code).toBe("schema_too_large");
    const long = object({ a: { type: "string", description: "x".repeat(70_000) } });
    expect(issueOf(long)).toMatchObject({ code: "schema_too_large", pointer: "" });
  });

  it("refuses malformed schemas as invalid_schema", () => {
    expect(issueOf({ type: "string" })).toMatchObject({ code: "invalid_schema", keyword: "type" });
    expect(issueOf(object({ a: { type: "array" } }))).toMatchObject({
      code: "invalid_schema",
      keyword: "items",
    });
    expect(issueOf(object({ a: { type: "string", maxLength: 1e6 } }))).toMatchObject({
      keyword: "maxLength",
    });
    expect(issueOf(object({ a: { enum: [] } }))).toMatchObject({
      keyword: "enum",
      pointer: "/properties/a/enum",
    });
    expect(issueOf(object({ a: { type: "string", enum: [1] } }))).toMatchObject({ keyword: "enum" });
    expect(issueOf(object({ a: {} }))).toMatchObject({ code: "invalid_schema", pointer: "/properties/a" });
    expect(issueOf(object({ a: { type: "widget" } }))).toMatchObject({ keyword: "type" });
  });

  it("accepts what zod 4 emits for common schemas: safe-integer bounds, min/max, enums, nullable, annotations", () => {
    const schema = z.toJSONSchema(
      z
        .object({
          count: z.int(),
          age: z.int().min(0).max(150).describe("years"),
          ratio: z.number().positive().lt(1),
          score: z.number().min(-1).max(1),
          name: z.string().min(1).max(40).default("x"),
          kind: z.enum(["a", "b"]),
          tags: z.array(z.string()).max(3),
          note: z.string().nullable(),
          inner: z.object({ ok: z.literal(true) }).meta({ title: "Inner", examples: [{ ok: true }] }),
        })
        .strict(),
    );
    expect(schema).toHaveProperty("$schema");
    expect(schema).toHaveProperty(["properties", "count", "minimum"], -(2 ** 53 - 1));
    const check = checkJsonSchemaSubset(schema, { rootObject: true });
    expect(check).toMatchObject({ ok: true });
  });

  it("takes a required list that leaves properties out; strict mode refuses it", () => {
    const optional = object({ a: { type: "string" }, b: { type: "string" } }, { required: ["a"] });
    const check = checkJsonSchemaSubset(optional, { rootObject: true });
    expect(check.ok).toBe(true);
    expect(check.ok && checkStrictSchema(check.schema)).toMatchObject({
      keyword: "required",
      pointer: "/required",
    });
    expect(issueOf(object({ a: { type: "string" } }, { required: ["a", "a"] }))).toMatchObject({
      code: "invalid_schema",
      keyword: "required",
    });
    expect(issueOf(object({ a: { type: "string" } }, { required: ["b"] }))).toMatchObject({
      keyword: "required",
    });
  });

  it("refuses number bounds that are not numbers or leave no value", () => {
    expect(issueOf(object({ n: { type: "number", minimum: "0" } }))).toMatchObject({
      code: "invalid_schema",
      keyword: "minimum",
      pointer: "/properties/n/minimum",
    });
    expect(issueOf(object({ n: { type: "number", exclusiveMinimum: true } }))).toMatchObject({
      keyword: "exclusiveMinimum",
    });
    expect(issueOf(object({ n: { type: "number", minimum: 2, maximum: 1 } }))).toMatchObject({
      code: "invalid_schema",
      pointer: "/properties/n",
    });
    expect(
      issueOf(object({ n: { type: "integer", exclusiveMinimum: 1, exclusiveMaximum: 2 } })),
    ).toMatchObject({
      code: "invalid_schema",
    });
    expect(issueOf(object({ n: { type: "number", minimum: 1, default: 1, title: 3 } }))).toMatchObject({
      keyword: "title",
    });
  });

  it("decodes bounded numbers under what the grammar can hold", () => {
    expect(numberGrammar({ type: "integer", minimum: -(2 ** 53 - 1), maximum: 2 ** 53 - 1 })).toEqual({
      integer: true,
      sign: "any",
      digits: 15,
      exponent: false,
    });
    expect(numberGrammar({ type: "integer", minimum: 0 })).toMatchObject({ sign: "nonNegative", digits: 15 });
    expect(numberGrammar({ type: "integer", exclusiveMinimum: 0 })).toMatchObject({ sign: "positive" });
    expect(numberGrammar({ type: "integer", minimum: 1, exclusiveMaximum: 4 })).toEqual({ enum: [1, 2, 3] });
    expect(numberGrammar({ type: "number", minimum: 0, maximum: 100 })).toEqual({
      integer: false,
      sign: "nonNegative",
      digits: 3,
      exponent: false,
    });
    expect(numberGrammar({ type: "number" })).toBeNull();
    const spec = numberGrammar({ type: "integer", minimum: 0 });
    expect(toGbnfJsonSchema({ type: "object", properties: { n: { type: "integer", minimum: 0 } } })).toEqual({
      type: "object",
      properties: { n: { const: encodeNumberSentinel(spec as Parameters<typeof encodeNumberSentinel>[0]) } },
      additionalProperties: false,
    });
  });

  it("accepts every generated subset schema, and each converts without losing a keyword it constrains", () => {
    fc.assert(
      fc.property(objectSchemaArb(subsetSchemaArb(4)), (schema) => {
        expect(checkJsonSchemaSubset(schema, { rootObject: true })).toEqual({ ok: true, schema });
        const strict = toStrictJsonSchema(schema);
        expect(strict["additionalProperties"]).toBe(false);
        expect(JSON.stringify(toGbnfJsonSchema(schema))).not.toContain('"anyOf"');
      }),
      { numRuns: 200 },
    );
  });
});

describe("validateJsonValue", () => {
  const schema: SubsetSchema = {
    type: "object",
    properties: {
      city: { type: "string", maxLength: 5 },
      days: { type: "array", items: { type: "integer" }, maxItems: 2 },
      unit: { anyOf: [{ enum: ["c", "f"] }, { type: "null" }] },
    },
  };
  it("accepts a valid value and points at the first problem otherwise", () => {
    expect(validateJsonValue(schema, { city: "Oslo", days: [1, 2], unit: null })).toBeNull();
    expect(validateJsonValue(schema, { city: "Oslo", days: [1.5], unit: "c" })).toMatchObject({
      pointer: "/days/0",
    });
    expect(validateJsonValue(schema, { city: "Oslo!!", days: [], unit: "c" })).toMatchObject({
      pointer: "/city",
    });
    expect(validateJsonValue(schema, { city: "a", days: [], unit: "k" })).toMatchObject({ pointer: "/unit" });
    expect(validateJsonValue(schema, { city: "a", days: [] })).toMatchObject({
      pointer: "/unit",
      message: "required property missing",
    });
    expect(validateJsonValue(schema, { city: "a", days: [], unit: "c", x: 1 })).toMatchObject({
      pointer: "/x",
    });
    expect(validateJsonValue(schema, [])).toMatchObject({ pointer: "" });
  });

  it("checks numeric bounds, inclusive and exclusive", () => {
    const bounded: SubsetSchema = {
      type: "object",
      properties: {
        n: { type: "integer", minimum: 0, maximum: 10 },
        x: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
      },
    };
    expect(validateJsonValue(bounded, { n: 0, x: 0.5 })).toBeNull();
    expect(validateJsonValue(bounded, { n: 10, x: 0.999 })).toBeNull();
    expect(validateJsonValue(bounded, { n: -1, x: 0.5 })).toMatchObject({
      pointer: "/n",
      message: "below the minimum 0",
    });
    expect(validateJsonValue(bounded, { n: 11, x: 0.5 })).toMatchObject({ pointer: "/n" });
    expect(validateJsonValue(bounded, { n: 1, x: 0 })).toMatchObject({
      pointer: "/x",
      message: "below the exclusive minimum 0",
    });
    expect(validateJsonValue(bounded, { n: 1, x: 1 })).toMatchObject({ pointer: "/x" });
  });
});

describe("the output constraint on the wire", () => {
  const params = { type: "object", properties: { q: { type: "string" } } };
  const base = {
    version: WIRE_VERSION,
    type: "generate",
    requestId: "r",
    slotKey: "c",
    adapter: "chat",
    prompt: "v",
    priority: "answer",
    timeoutMs: 1000,
  };

  it("refuses two tools with one name, a choice of no tool, and an unsupported keyword", () => {
    const twice = outputConstraintSchema.safeParse({
      type: "tools",
      tools: [
        { name: "f", parameters: params },
        { name: "f", parameters: params },
      ],
    });
    expect(twice.error?.issues[0]?.message).toBe('two tools are named "f"');
    const stray = outputConstraintSchema.safeParse({
      type: "tools",
      tools: [{ name: "f", parameters: params }],
      choice: { name: "g" },
    });
    expect(stray.success).toBe(false);
    const pattern = outputConstraintSchema.safeParse({
      type: "json_schema",
      name: "out",
      schema: object({ a: { type: "string", pattern: "x" } }),
    });
    expect(pattern.error?.issues[0]?.message).toBe(
      'schema at /properties/a/pattern: keyword "pattern": "pattern" is not supported',
    );
  });

  it("defaults choice and parallel, and refuses fields this node does not know", () => {
    const parsed = generateRequestSchema.parse({
      ...base,
      constraint: { type: "tools", tools: [{ name: "f", parameters: params }] },
    });
    expect(parsed.constraint).toMatchObject({ choice: "auto", parallel: false });
    expect(generateRequestSchema.safeParse({ ...base, futureField: 1 }).success).toBe(false);
  });
});
