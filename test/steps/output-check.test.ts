import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../schema/harness/harness-document.ts";
import { WIRE_VERSION, outputConstraintSchema, type OutputConstraint } from "../../schema/wire/v2/index.ts";
import type { StartTurnRequest } from "../../workers/src/conversation/conversation-rpc.ts";
import type { GenerateStreamPart } from "../../workers/src/nats/generate-client.ts";
import {
  MAX_CHECK_ERRORS,
  MAX_CHECK_ERROR_CHARS,
  checkAnswerOutput,
} from "../../workers/src/steps/answer-output-checks.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import {
  META,
  MemoryConversationStore,
  TIMINGS,
  answerParts,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "../conversation/turn-loop-fixtures.ts";

const TRIP = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 } },
  required: ["city", "days"],
  additionalProperties: false,
};
const jsonSchema = outputConstraintSchema.parse({ type: "json_schema", name: "trip", schema: TRIP });
const jsonObject = outputConstraintSchema.parse({ type: "json_object" });
const TOOLS = [
  { name: "get_weather", parameters: TRIP },
  { name: "ping", parameters: { type: "object", properties: {} } },
];
const toolsConstraint = (rest: Record<string, unknown> = {}): OutputConstraint =>
  outputConstraintSchema.parse({ type: "tools", tools: TOOLS, ...rest });
const call = (name: string, args: string) => ({ id: `call_${name}`, name, arguments: args });

describe("the answer output checks", () => {
  it("run nothing for free text or a grammar", () => {
    expect(checkAnswerOutput({ text: "hello" }, undefined)).toEqual([]);
    expect(checkAnswerOutput({ text: "yes" }, { type: "grammar", gbnf: 'root ::= "yes"' })).toEqual([]);
    expect(checkAnswerOutput({ text: "plain" }, toolsConstraint())).toEqual([]);
  });

  it("pass a JSON answer that parses and validates", () => {
    expect(checkAnswerOutput({ text: '{"city":"Paris","days":2}' }, jsonSchema)).toEqual([
      { check: "json_output", valid: true },
    ]);
    expect(checkAnswerOutput({ text: '{"any": [1]}' }, jsonObject)).toEqual([
      { check: "json_output", valid: true },
    ]);
  });

  it("fail a JSON answer that is cut off, not an object, or breaks the schema, saying where", () => {
    const [cut] = checkAnswerOutput({ text: '{"city":"Par' }, jsonSchema);
    expect(cut).toMatchObject({
      check: "json_output",
      valid: false,
      errors: [expect.stringMatching(/^not JSON/)],
    });
    expect(checkAnswerOutput({ text: "[1]" }, jsonObject)).toEqual([
      { check: "json_output", valid: false, errors: ["not a JSON object"] },
    ]);
    const [bad] = checkAnswerOutput({ text: '{"city":3,"days":0,"extra":true}' }, jsonSchema);
    expect(bad?.valid).toBe(false);
    expect(bad?.errors).toEqual([
      expect.stringMatching(/^at #\/city: .*string/),
      expect.stringMatching(/^at #\/days: .*1/),
      expect.stringMatching(/^at #: .*extra/),
    ]);
  });

  it("clip the errors to the first few, each short", () => {
    const many = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, { type: "string" }])),
    };
    const constraint = outputConstraintSchema.parse({ type: "json_schema", name: "many", schema: many });
    const value = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, i]));
    const [check] = checkAnswerOutput({ text: JSON.stringify(value) }, constraint);
    expect(check?.errors).toHaveLength(MAX_CHECK_ERRORS);
    const [long] = checkAnswerOutput({ text: `{"${"k".repeat(500)}` }, jsonObject);
    expect(long?.errors?.[0]?.length).toBeLessThanOrEqual(MAX_CHECK_ERROR_CHARS);
  });

  it("check every call's arguments against its tool's parameters", () => {
    const ok = { text: "", toolCalls: [call("get_weather", '{"city":"Oslo","days":1}'), call("ping", "{}")] };
    expect(checkAnswerOutput(ok, toolsConstraint())).toEqual([{ check: "tool_arguments", valid: true }]);
    const bad = {
      text: "",
      toolCalls: [call("get_weather", '{"city":"Oslo"}'), call("ping", "{"), call("nope", "{}")],
    };
    const [check] = checkAnswerOutput(bad, toolsConstraint());
    expect(check).toMatchObject({ check: "tool_arguments", valid: false });
    expect(check?.errors).toEqual([
      expect.stringMatching(/^call 0 \(get_weather\) at #: .*days/),
      expect.stringMatching(/^call 1 \(ping\) not JSON/),
      "call 2 (nope): not one of the offered tools",
    ]);
  });

  it("check a text answer under tools with a JSON format against the format", () => {
    const constraint = toolsConstraint({ format: { name: "trip", schema: TRIP } });
    expect(checkAnswerOutput({ text: '{"city":"Rome","days":3}' }, constraint)).toEqual([
      { check: "json_output", valid: true },
    ]);
    expect(checkAnswerOutput({ text: "Rome" }, constraint)[0]?.valid).toBe(false);
  });
});

/** A node's answer that is one function call with these arguments. */
// eslint-disable-next-line @typescript-eslint/require-await -- an async stream like the wire's, with nothing to wait for
async function* callParts(name: string, args: string): AsyncGenerator<GenerateStreamPart> {
  const base = { version: WIRE_VERSION } as const;
  yield { ...base, seq: 0, type: "start", requestId: "r", nodeId: "n", adapter: "a", revision: "rev1" };
  const toolCall = call(name, args);
  yield { ...base, seq: 1, type: "tool-call-delta", index: 0, id: toolCall.id, name, argumentsDelta: args };
  yield {
    ...base,
    seq: 2,
    type: "finish",
    finishReason: "tool_calls",
    text: "",
    toolCalls: [toolCall],
    usage: usage(50, 3),
    timings: TIMINGS,
  };
}

/** The default harness, its `coding` specialist (the scripted router's pick) extended by `fields`. */
function withCoding(fields: Record<string, unknown>): HarnessDocument {
  const coding = DEFAULT_HARNESS.specialists["coding"];
  return harnessDocumentSchema.parse({
    ...DEFAULT_HARNESS,
    specialists: { ...DEFAULT_HARNESS.specialists, coding: { ...coding, ...fields } },
  });
}

async function runTurn(
  harness: HarnessDocument,
  answer: () => AsyncGenerator<GenerateStreamPart>,
  request: Partial<StartTurnRequest> = {},
) {
  const scripted = createScriptedHops({ answer });
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, { harness });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const result = turns.startTurn({ conversationId: META.id, text: "Plan a trip.", ...request });
  if (!result.ok) throw new Error(result.refusal.code);
  const parts = await collectParts(result.stream);
  await turns.afterTurns(() => Promise.resolve());
  const steps = store.events.flatMap((event) => (event.type === "step" ? [event] : []));
  return { parts, scripted, store, steps };
}

describe("the output-check step in the default program", () => {
  it("appends nothing for a free-text answer", async () => {
    const { steps, store } = await runTurn(DEFAULT_HARNESS, () => answerParts("Hi.", usage(100, 2)));
    expect(steps).toEqual([]);
    expect(store.events.map((event) => event.type)).toEqual([
      "user_message",
      "route_decision",
      "answer",
      "summary",
    ]);
  });

  it("decodes under the harness output and records a fail verdict, while the answer stands", async () => {
    const harness = withCoding({ output: { format: "json_schema", name: "trip", schema: TRIP } });
    const { steps, scripted, parts } = await runTurn(harness, () =>
      answerParts('{"city": "Paris"}', usage(100, 5)),
    );
    expect(scripted.calls.answer[0]?.constraint).toEqual({ type: "json_schema", name: "trip", schema: TRIP });
    expect(steps).toEqual([
      expect.objectContaining({
        step: "output-check",
        kind: "output-check",
        verdict: "fail",
        data: { check: "json_output", valid: false, errors: [expect.stringContaining("days")] },
      }),
    ]);
    const finish = parts.at(-1);
    expect(finish).toMatchObject({ type: "turn-finish", turn: { status: "completed" } });
  });

  it("lets the request's constraint win over the harness output", async () => {
    const harness = withCoding({ output: { format: "grammar", grammar: 'root ::= "x"' } });
    const { steps, scripted } = await runTurn(harness, () => answerParts('{"a": 1}', usage(100, 5)), {
      constraint: outputConstraintSchema.parse({ type: "json_object" }),
    });
    expect(scripted.calls.answer[0]?.constraint).toEqual({ type: "json_object" });
    expect(steps.map((step) => [step.verdict, step.data])).toEqual([
      ["pass", { check: "json_output", valid: true }],
    ]);
  });

  it("checks a call's arguments, under the tools the specialist may call", async () => {
    const harness = withCoding({ tools: { mode: "required", allow: ["get_weather"] } });
    const { steps, scripted } = await runTurn(
      harness,
      () => callParts("get_weather", '{"city": "Oslo", "days": 2}'),
      { tools: TOOLS.map((tool) => ({ ...tool })), constraint: toolsConstraint() },
    );
    const sent = scripted.calls.answer[0]?.constraint;
    expect(sent).toMatchObject({ type: "tools", choice: "required" });
    expect(sent?.type === "tools" ? sent.tools.map((tool) => tool.name) : []).toEqual(["get_weather"]);
    // The views still show every tool the request sent: only the decoding changed.
    expect(scripted.calls.answer[0]?.prompt).toContain("ping");
    expect(steps.map((step) => [step.verdict, step.data])).toEqual([
      ["pass", { check: "tool_arguments", valid: true }],
    ]);
  });

  it("answers in text under tools `none`, with nothing to check", async () => {
    const harness = withCoding({ tools: { mode: "none" } });
    const { steps, scripted } = await runTurn(harness, () => answerParts("No tools today.", usage(100, 3)), {
      tools: TOOLS.map((tool) => ({ ...tool })),
      constraint: toolsConstraint(),
    });
    expect(scripted.calls.answer[0]?.constraint).toBeUndefined();
    expect(steps).toEqual([]);
  });
});
