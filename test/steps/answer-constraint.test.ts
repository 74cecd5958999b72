import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema } from "../../schema/harness/harness-document.ts";
import type { SpecialistSettings } from "../../schema/harness/harness-settings.ts";
import { outputConstraintSchema, type OutputConstraint } from "../../schema/wire/v2/index.ts";
import { answerConstraintFor } from "../../workers/src/steps/answer-constraint.ts";

const PARAMETERS = { type: "object", properties: {} };
const FORMAT_SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false,
};

function specialist(fields: Partial<SpecialistSettings>): SpecialistSettings {
  const chat = DEFAULT_HARNESS.specialists["chat"];
  const doc = harnessDocumentSchema.parse({
    ...DEFAULT_HARNESS,
    specialists: { ...DEFAULT_HARNESS.specialists, chat: { ...chat, ...fields } },
  });
  const settings = doc.specialists["chat"];
  if (!settings) throw new Error("no chat specialist");
  return settings;
}

function tools(names: string[], rest: Record<string, unknown> = {}): OutputConstraint {
  return outputConstraintSchema.parse({
    type: "tools",
    tools: names.map((name) => ({ name, parameters: PARAMETERS })),
    ...rest,
  });
}

const toolNames = (constraint: ReturnType<typeof answerConstraintFor>): string[] | undefined =>
  constraint?.type === "tools" ? constraint.tools.map((tool) => tool.name) : undefined;

describe("the answer's constraint", () => {
  it("is the request's when the specialist sets nothing", () => {
    const requested = tools(["a"]);
    expect(answerConstraintFor(requested, specialist({}))).toBe(requested);
    expect(answerConstraintFor(undefined, specialist({}))).toBeUndefined();
  });

  it("is the harness output when the request sets none, and the request's when it does", () => {
    const chat = specialist({ output: { format: "json_schema", schema: FORMAT_SCHEMA } });
    expect(answerConstraintFor(undefined, chat)).toEqual({
      type: "json_schema",
      name: "output",
      schema: FORMAT_SCHEMA,
    });
    const requested = outputConstraintSchema.parse({ type: "json_object" });
    expect(answerConstraintFor(requested, chat)).toBe(requested);
    expect(answerConstraintFor(tools(["a"]), chat)?.type).toBe("tools");
    expect(answerConstraintFor(undefined, specialist({ output: { format: "json_object" } }))).toEqual({
      type: "json_object",
    });
    const gbnf = 'root ::= "yes" | "no"';
    expect(
      answerConstraintFor(undefined, specialist({ output: { format: "grammar", grammar: gbnf } })),
    ).toEqual({ type: "grammar", gbnf });
  });

  it("under tools `none` drops the tools: the request's format, else the harness output, else free text", () => {
    const none = specialist({ tools: { mode: "none" } });
    expect(answerConstraintFor(tools(["a"]), none)).toBeUndefined();
    expect(
      answerConstraintFor(tools(["a"], { format: { name: "fmt", schema: FORMAT_SCHEMA } }), none),
    ).toEqual({ type: "json_schema", name: "fmt", schema: FORMAT_SCHEMA });
    const noneWithOutput = specialist({ tools: { mode: "none" }, output: { format: "json_object" } });
    expect(answerConstraintFor(tools(["a"]), noneWithOutput)).toEqual({ type: "json_object" });
  });

  it("under `allow` keeps only the allowed tools, and drops them all when none is offered", () => {
    const allow = specialist({ tools: { mode: "auto", allow: ["b", "c"] } });
    const narrowed = answerConstraintFor(
      tools(["a", "b", "c"], { choice: "required", parallel: true }),
      allow,
    );
    expect(toolNames(narrowed)).toEqual(["b", "c"]);
    expect(narrowed).toMatchObject({ choice: "required", parallel: true });
    expect(answerConstraintFor(tools(["a"]), allow)).toBeUndefined();
    // A call the client forced on a tool the specialist may not call: it answers in text instead.
    expect(answerConstraintFor(tools(["a", "b"], { choice: { name: "a" } }), allow)).toBeUndefined();
    expect(answerConstraintFor(tools(["a", "b"], { choice: { name: "b" } }), allow)).toMatchObject({
      choice: { name: "b" },
    });
  });

  it("under `required` must call: auto becomes required, a named choice stays", () => {
    const required = specialist({ tools: { mode: "required" } });
    expect(answerConstraintFor(tools(["a", "b"]), required)).toMatchObject({ choice: "required" });
    expect(answerConstraintFor(tools(["a", "b"], { choice: { name: "a" } }), required)).toMatchObject({
      choice: { name: "a" },
    });
  });
});
