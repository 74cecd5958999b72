import fc from "fast-check";
import type { SubsetSchema } from "../../schema/tools/json-schema-subset.ts";

const nameArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,7}$/);
const primitiveArb = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.boolean(),
  fc.constant(null),
);

/** Schemas in the supported subset, nested up to `depth` levels, small enough for a tiny model to finish. */
export function subsetSchemaArb(depth: number): fc.Arbitrary<SubsetSchema> {
  const leaf: fc.Arbitrary<SubsetSchema> = fc.oneof(
    fc.record(
      { type: fc.constant("string" as const), maxLength: fc.integer({ min: 0, max: 8 }) },
      { requiredKeys: ["type", "maxLength"] },
    ),
    fc.constantFrom<SubsetSchema>(
      { type: "integer" },
      { type: "number" },
      { type: "boolean" },
      { type: "null" },
    ),
    fc.constantFrom<SubsetSchema>({ type: ["string", "null"] }, { type: ["integer", "boolean"] }),
    fc
      .uniqueArray(primitiveArb, { minLength: 1, maxLength: 4 })
      .map((values): SubsetSchema => ({ enum: values })),
    primitiveArb.map((value): SubsetSchema => ({ const: value })),
    fc.constantFrom<SubsetSchema>({ type: "string", enum: ["red", "green"], description: "a colour" }),
  );
  if (depth <= 1) return leaf;
  const inner = subsetSchemaArb(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 2, arbitrary: objectSchemaArb(inner) },
    {
      weight: 1,
      arbitrary: fc
        .record({
          items: inner,
          minItems: fc.integer({ min: 0, max: 1 }),
          maxItems: fc.integer({ min: 1, max: 2 }),
        })
        .map((a): SubsetSchema => ({ type: "array", ...a })),
    },
    {
      weight: 1,
      arbitrary: fc.array(inner, { minLength: 1, maxLength: 2 }).map((anyOf): SubsetSchema => ({ anyOf })),
    },
  );
}

export function objectSchemaArb(inner: fc.Arbitrary<SubsetSchema>): fc.Arbitrary<SubsetSchema> {
  return fc
    .uniqueArray(fc.tuple(nameArb, inner), { maxLength: 3, selector: ([name]) => name })
    .chain((entries) =>
      fc.boolean().map((spellOut): SubsetSchema => {
        const properties = Object.fromEntries(entries);
        return spellOut
          ? { type: "object", properties, required: Object.keys(properties), additionalProperties: false }
          : { type: "object", properties };
      }),
    );
}
