import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createChatCompletionBodySchema } from "../../workers/src/api/schemas/create-chat-completion-body-schema.ts";
import { createResponseBodySchema } from "../../workers/src/api/schemas/create-response-body-schema.ts";
import { RELAXED_KEYWORDS, relaxJsonSchema } from "../../schema/tools/relax-schema.ts";
import type { SubsetSchema } from "../../schema/tools/json-schema-subset.ts";
import { objectSchemaArb, subsetSchemaArb } from "./schema-arbitrary.ts";

/**
 * Schemas sent without `strict` are taken with the value hints a grammar cannot hold (OpenAI takes any schema
 * then): generated subset schemas with such keywords sprinkled over their subschemas are accepted on both APIs and
 * decode as the schema without them; the same with `strict: true` is refused naming a sprinkled keyword.
 */

const limits = { maxMessageBytes: 1 << 20 };
const chatBody = createChatCompletionBodySchema(limits);
const responseBody = createResponseBodySchema(limits);

const HINT_VALUES: Record<string, unknown> = {
  format: "float",
  pattern: "^[a-z]+$",
  multipleOf: 2,
  uniqueItems: true,
  minProperties: 1,
  maxProperties: 4,
  contentEncoding: "base64",
  contentMediaType: "text/plain",
  deprecated: false,
  readOnly: true,
  writeOnly: false,
  $id: "https://example.com/s",
  $comment: "generated",
  $anchor: "a",
  example: "x",
  nullable: true,
};

const asRecord = (schema: SubsetSchema): Record<string, unknown> => ({ ...schema });

/** Every subschema the subset walks (root, properties, items, anyOf), depth first. */
function subschemas(node: Record<string, unknown>): Array<Record<string, unknown>> {
  const kids: unknown[] = [
    ...Object.values((node["properties"] ?? {}) as Record<string, unknown>),
    ...(node["items"] ? [node["items"]] : []),
    ...((node["anyOf"] ?? []) as unknown[]),
  ];
  return [node, ...kids.flatMap((kid) => subschemas(kid as Record<string, unknown>))];
}

const hintsArb = fc.array(fc.tuple(fc.nat(), fc.constantFrom(...RELAXED_KEYWORDS, "additionalProperties")), {
  minLength: 1,
  maxLength: 6,
});

/** A copy of `schema` with each hint set on the subschema its index picks (where that keyword is not set yet). */
function sprinkle(schema: SubsetSchema, hints: Array<[number, string]>): Record<string, unknown> {
  const copy = asRecord(structuredClone(schema));
  const nodes = subschemas(copy);
  for (const [index, keyword] of hints) {
    const node = nodes[index % nodes.length] ?? copy;
    if (!(keyword in node)) node[keyword] = keyword === "additionalProperties" ? true : HINT_VALUES[keyword];
  }
  return copy;
}

/** The hint keywords `sprinkle` set. */
function sprinkled(schema: SubsetSchema, hinted: Record<string, unknown>): string[] {
  const before = subschemas(asRecord(schema));
  return subschemas(hinted).flatMap((node, i) =>
    Object.keys(node).filter((key) => !(key in (before[i] ?? {}))),
  );
}

const rootArb = objectSchemaArb(subsetSchemaArb(3));

function chatTool(parameters: Record<string, unknown>, strict?: boolean) {
  return {
    model: "mol",
    messages: [{ role: "user", content: "x" }],
    tools: [{ type: "function", function: { name: "f", parameters, ...(strict ? { strict } : {}) } }],
  };
}

describe("schemas sent without strict", () => {
  it("are taken with value hints, on both APIs, and decode as the schema without them", () => {
    fc.assert(
      fc.property(rootArb, hintsArb, (schema, hints) => {
        const hinted = sprinkle(schema, hints);
        const plain = chatBody.parse(chatTool(asRecord(schema)));
        const chat = chatBody.safeParse(chatTool(hinted));
        expect(chat.error?.issues ?? []).toEqual([]);
        expect(chat.data?.tools?.[0]?.function.parameters).toEqual(plain.tools?.[0]?.function.parameters);
        const responses = responseBody.safeParse({
          model: "mol",
          input: "x",
          tools: [{ type: "function", name: "f", parameters: hinted }],
          text: { format: { type: "json_schema", name: "o", schema: hinted } },
        });
        expect(responses.error?.issues ?? []).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("with strict: true, are refused naming a keyword they carried", () => {
    fc.assert(
      fc.property(rootArb, hintsArb, (schema, hints) => {
        const hinted = sprinkle(schema, hints);
        const added = sprinkled(schema, hinted);
        fc.pre(added.length > 0);
        const result = chatBody.safeParse(chatTool(hinted, true));
        expect(result.success).toBe(false);
        const message = result.error?.issues[0]?.message ?? "";
        expect(added.some((keyword) => message.includes(`"${keyword}"`))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("still refuse structure the grammar cannot follow, naming it", () => {
    const ref = chatBody.safeParse(
      chatTool({
        type: "object",
        properties: { a: { $ref: "#/$defs/a" } },
        $defs: { a: { type: "string" } },
      }),
    );
    expect(ref.error?.issues[0]?.message).toMatch(/"\$(ref|defs)"/);
  });

  it("relaxes without touching its input, noting the first keyword dropped and where", () => {
    const input = { type: "object", properties: { n: { type: "number", format: "float" } } };
    const frozen = structuredClone(input);
    const { schema, dropped } = relaxJsonSchema(input);
    expect(input).toEqual(frozen);
    expect(schema).toEqual({ type: "object", properties: { n: { type: "number" } } });
    expect(dropped).toMatchObject({ keyword: "format", pointer: "/properties/n/format" });
    expect(relaxJsonSchema({ type: "object" })).toEqual({
      schema: { type: "object", properties: {} },
      dropped: expect.objectContaining({ keyword: "properties" }) as unknown,
    });
  });
});
