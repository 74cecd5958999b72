import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { validateJsonValue } from "../../schema/tools/validate-json-value.ts";
import {
  WIRE_VERSION,
  buildGenerateSubject,
  streamPartSchema,
  type OutputConstraintInput,
  type ToolDefinition,
} from "../../schema/wire/v2/index.ts";
import { answerInput, collectAnswer, type CollectedAnswer } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";
import { objectSchemaArb, subsetSchemaArb } from "../tools/schema-arbitrary.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({ natsUrl: nats.url, models: inject("models") });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const TOOLS: ToolDefinition[] = [
  {
    name: "get_weather",
    description: "weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 12 }, unit: { enum: ["c", "f"] } },
    },
  },
  {
    name: "add",
    parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } } },
  },
];

function answerWith(constraint: OutputConstraintInput, i: number, maxTokens = 160) {
  return answerInput(`constraint-${i % 3}`, "chat", `system: tools\nuser: request ${i}\nassistant: `, {
    sampling: { maxTokens, temperature: 0.9, seed: i },
    constraint,
  });
}

/** Every call validates, and each call's deltas join to its arguments. */
function expectValidCalls(answer: CollectedAnswer, allowed: readonly string[]): void {
  const { finish } = answer;
  expect(finish.finishReason).toBe("tool_calls");
  expect(finish.text).toBe("");
  expect(answer.deltas).toEqual([]);
  const calls = finish.toolCalls ?? [];
  expect(calls.length).toBeGreaterThan(0);
  calls.forEach((call, index) => {
    expect(allowed).toContain(call.name);
    expect(call.id).toMatch(/^call_[0-9a-f]{24}$/);
    const tool = TOOLS.find((candidate) => candidate.name === call.name);
    expect(validateJsonValue(tool?.parameters ?? { type: "null" }, JSON.parse(call.arguments))).toBeNull();
    const mine = answer.toolDeltas.filter((delta) => delta.index === index);
    expect(mine.map((delta) => delta.argumentsDelta).join("")).toBe(call.arguments);
    expect(new Set(mine.map((delta) => `${delta.id} ${delta.name}`))).toEqual(
      new Set([`${call.id} ${call.name}`]),
    );
  });
}

describe("answers under an output constraint (real llama.cpp, tiny random model)", () => {
  it("json_schema: output always parses and validates, over generated schemas", async () => {
    const schemas = fc.sample(objectSchemaArb(subsetSchemaArb(3)), { numRuns: 20, seed: 7 });
    let stopped = 0;
    for (const [i, schema] of schemas.entries()) {
      const answer = await collectAnswer(
        t.client,
        answerWith({ type: "json_schema", name: "out", schema }, i, 400),
      );
      if (answer.finish.finishReason === "length") continue;
      stopped += 1;
      expect(answer.finish.finishReason).toBe("stop");
      expect(validateJsonValue(schema, JSON.parse(answer.text)), answer.text).toBeNull();
    }
    // A random model that rambles past the budget on every schema would make the property vacuous.
    expect(stopped).toBeGreaterThanOrEqual(15);
  });

  it("json_object: output is a JSON object", async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await collectAnswer(t.client, answerWith({ type: "json_object" }, i, 300));
      if (answer.finish.finishReason === "length") continue;
      const value: unknown = JSON.parse(answer.text);
      expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
    }
  });

  it("tools, required: one valid call of any tool, arguments streamed", async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await collectAnswer(
        t.client,
        answerWith({ type: "tools", tools: TOOLS, choice: "required" }, i),
      );
      expectValidCalls(answer, ["get_weather", "add"]);
      expect(answer.finish.toolCalls).toHaveLength(1);
    }
  });

  it("tools, named: only that tool is called", async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await collectAnswer(
        t.client,
        answerWith({ type: "tools", tools: TOOLS, choice: { name: "add" } }, i),
      );
      expectValidCalls(answer, ["add"]);
    }
  });

  it("tools, parallel: one or more valid calls, each streamed under its own index", async () => {
    const answer = await collectAnswer(
      t.client,
      answerWith({ type: "tools", tools: TOOLS, choice: "required", parallel: true }, 11, 400),
    );
    expectValidCalls(answer, ["get_weather", "add"]);
  });

  it("tools, auto: plain text that never starts the marker, or valid calls", async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await collectAnswer(t.client, answerWith({ type: "tools", tools: TOOLS }, i, 40));
      if (answer.finish.finishReason === "tool_calls") expectValidCalls(answer, ["get_weather", "add"]);
      else {
        expect(answer.text.length).toBeGreaterThan(0);
        expect(answer.text.startsWith("<")).toBe(false);
        expect(answer.finish.text).toBe(answer.text);
        expect(answer.toolDeltas).toEqual([]);
      }
    }
  });

  it("tools, auto with a JSON format: JSON valid under the format, or valid calls", async () => {
    const report = {
      type: "object" as const,
      properties: { city: { type: "string" as const, maxLength: 12 }, degrees: { type: "integer" as const } },
    };
    const kinds = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const answer = await collectAnswer(
        t.client,
        answerWith({ type: "tools", tools: TOOLS, format: { name: "report", schema: report } }, i, 160),
      );
      kinds.add(answer.finish.finishReason);
      if (answer.finish.finishReason === "tool_calls") expectValidCalls(answer, ["get_weather", "add"]);
      else if (answer.finish.finishReason === "stop") {
        expect(validateJsonValue(report, JSON.parse(answer.text)), answer.text).toBeNull();
        expect(answer.toolDeltas).toEqual([]);
      }
    }
    expect([...kinds].some((kind) => kind !== "length")).toBe(true);
  });

  it("json_schema with numeric bounds: safe-integer and sign bounds hold, small ranges are exact", async () => {
    const schema = {
      type: "object" as const,
      properties: {
        count: { type: "integer" as const, minimum: -(2 ** 53 - 1), maximum: 2 ** 53 - 1 },
        size: { type: "integer" as const, minimum: 0 },
        share: { type: "number" as const, exclusiveMinimum: 0 },
        stars: { type: "integer" as const, minimum: 1, maximum: 5 },
      },
    };
    let stopped = 0;
    for (let i = 0; i < 6; i++) {
      const answer = await collectAnswer(
        t.client,
        answerWith({ type: "json_schema", name: "n", schema }, i, 200),
      );
      if (answer.finish.finishReason === "length") continue;
      stopped += 1;
      expect(validateJsonValue(schema, JSON.parse(answer.text)), answer.text).toBeNull();
    }
    expect(stopped).toBeGreaterThan(0);
  });

  it("the heartbeat lists what this engine can constrain", () => {
    expect(t.engine.features).toEqual(expect.arrayContaining(["output:json_schema", "output:tools-auto"]));
  });

  it("refuses a schema outside the subset or duplicate tool names as bad_request, before the engine runs", async () => {
    const raw = (constraint: unknown) => ({
      version: WIRE_VERSION,
      type: "generate",
      requestId: "bad-constraint",
      slotKey: "bad",
      adapter: "chat",
      prompt: "user: hi\n",
      priority: "answer",
      return: { stream: true },
      timeoutMs: 5_000,
      constraint,
    });
    const bodies = [
      raw({
        type: "json_schema",
        name: "x",
        schema: { type: "object", properties: { a: { type: "string", pattern: "." } } },
      }),
      raw({ type: "tools", tools: [TOOLS[0], TOOLS[0]] }),
      { ...raw(undefined), unknownField: true },
    ];
    for (const body of bodies) {
      const parts = [];
      for await (const msg of await t.client.requestMany(
        buildGenerateSubject(),
        new TextEncoder().encode(JSON.stringify(body)),
        {
          strategy: "sentinel",
          maxWait: 5_000,
        },
      )) {
        if (msg.data.length === 0) break;
        parts.push(streamPartSchema.parse(JSON.parse(new TextDecoder().decode(msg.data))));
      }
      expect(parts).toHaveLength(1);
      expect(parts[0]).toMatchObject({ type: "error", error: { code: "bad_request" } });
    }
  });
});
