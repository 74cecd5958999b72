import { describe, expect, it } from "vitest";
import { canonicalizeJson } from "../../schema/harness/content-hash.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import { MAX_OUTPUT_GRAMMAR_CHARS } from "../../schema/harness/specialist-output.ts";

/** The default harness with the `chat` specialist's settings extended by `fields`. */
function withChat(fields: Record<string, unknown>): unknown {
  const chat = DEFAULT_HARNESS.specialists["chat"];
  return {
    ...DEFAULT_HARNESS,
    specialists: { ...DEFAULT_HARNESS.specialists, chat: { ...chat, ...fields } },
  };
}

/** The issues a document raises, as `path: message`. */
function issuesOf(doc: unknown): string[] {
  const result = harnessDocumentSchema.safeParse(doc);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

const SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer" } },
  required: ["city", "days"],
  additionalProperties: false,
};

describe("specialists.<label>.output and .tools", () => {
  it("are optional without defaults, so documents without them keep their canonical JSON (and hash)", () => {
    const parsed = harnessDocumentSchema.parse(DEFAULT_HARNESS);
    expect(parsed.specialists["chat"]).not.toHaveProperty("output");
    expect(parsed.specialists["chat"]).not.toHaveProperty("tools");
    expect(canonicalizeJson(parsed)).toBe(canonicalizeJson(DEFAULT_HARNESS));
  });

  it.each([
    { format: "json_object" },
    { format: "json_schema", schema: SCHEMA },
    { format: "json_schema", name: "trip", schema: SCHEMA, strict: true },
    { format: "grammar", grammar: 'root ::= "yes" | "no"' },
  ])("accepts the output %j, kept as written", (output) => {
    const parsed = harnessDocumentSchema.parse(withChat({ output }));
    expect(parsed.specialists["chat"]?.output).toEqual(output);
  });

  it.each([{ mode: "auto" }, { mode: "none" }, { mode: "required", allow: ["get_weather", "search-web_2"] }])(
    "accepts the tool policy %j",
    (tools) => {
      const parsed: HarnessDocument = harnessDocumentSchema.parse(withChat({ tools }));
      expect(parsed.specialists["chat"]?.tools).toEqual(tools);
    },
  );

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      "an unknown output key",
      { output: { format: "json_object", extra: 1 } },
      /^specialists\.chat\.output: .*extra/,
    ],
    ["an unknown format", { output: { format: "xml" } }, /^specialists\.chat\.output\.format: /],
    [
      "a json_schema that is not an object",
      { output: { format: "json_schema", schema: "{}" } },
      /^specialists\.chat\.output\.schema: /,
    ],
    [
      "a json_schema whose root is not an object",
      { output: { format: "json_schema", schema: { type: "string" } } },
      /^specialists\.chat\.output\.schema: /,
    ],
    [
      "a json_schema outside the decodable subset",
      { output: { format: "json_schema", schema: { ...SCHEMA, patternProperties: {} } } },
      /^specialists\.chat\.output\.schema: .*patternProperties/,
    ],
    [
      "a strict json_schema that leaves a property out of required",
      { output: { format: "json_schema", strict: true, schema: { ...SCHEMA, required: ["city"] } } },
      /^specialists\.chat\.output\.schema: /,
    ],
    [
      "a grammar past the cap",
      { output: { format: "grammar", grammar: `root ::= "${"a".repeat(MAX_OUTPUT_GRAMMAR_CHARS)}"` } },
      /^specialists\.chat\.output\.grammar: /,
    ],
    [
      "a grammar without a root rule",
      { output: { format: "grammar", grammar: 'answer ::= "yes"' } },
      /^specialists\.chat\.output\.grammar: .*root/,
    ],
    [
      "an unknown tool policy key",
      { tools: { mode: "auto", deny: ["x"] } },
      /^specialists\.chat\.tools: .*deny/,
    ],
    ["an unknown tool mode", { tools: { mode: "sometimes" } }, /^specialists\.chat\.tools\.mode: /],
    ["an empty allow list", { tools: { mode: "auto", allow: [] } }, /^specialists\.chat\.tools\.allow: /],
    [
      "a bad tool name",
      { tools: { mode: "auto", allow: ["get weather"] } },
      /^specialists\.chat\.tools\.allow\.0: /,
    ],
    [
      "a tool name past 64 characters",
      { tools: { mode: "auto", allow: ["a".repeat(65)] } },
      /^specialists\.chat\.tools\.allow\.0: /,
    ],
    [
      "a repeated tool name",
      { tools: { mode: "auto", allow: ["a", "a"] } },
      /^specialists\.chat\.tools\.allow: /,
    ],
  ])("refuses %s, naming its path", (_what, fields, issue) => {
    const issues = issuesOf(withChat(fields));
    expect(issues.length, issues.join("\n")).toBeGreaterThan(0);
    expect(issues[0]).toMatch(issue);
  });
});
