import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;
let runner: Runner;

beforeAll(async () => {
  // Nothing leaves this machine: no trace export to OpenAI.
  setTracingDisabled(true);
  mesh = await startTestMesh();
  // The Agents SDK, unchanged, over the Responses API; its provider builds its own client (it needs openai 7).
  runner = new Runner({
    modelProvider: new OpenAIProvider({
      apiKey: TEST_API_KEY,
      baseURL: `${mesh.edge.url}/v1`,
      useResponses: true,
    }),
    tracingDisabled: true,
  });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

// Strings, numbers and arrays are bounded: the random-weight model only ever closes them because the grammar
// must, and an unbounded number (or a second parallel call) could outrun a test's token budget.
const weatherSchema = z.object({ city: z.string().max(16), unit: z.enum(["celsius", "fahrenheit"]) });
const reportSchema = z.object({
  city: z.string().max(16),
  temperature: z.int().min(-60).max(60),
  summary: z.string().max(32),
});

/** A function tool that records each call's parsed arguments; `isEnabled` may hide it after its first call. */
function weatherTool(calls: Array<z.infer<typeof weatherSchema>>, onlyOnce = false) {
  return tool({
    name: "get_weather",
    description: "The current weather in a city",
    parameters: weatherSchema,
    execute: (input) => {
      calls.push(input);
      return `21 degrees in ${input.city}`;
    },
    ...(onlyOnce ? { isEnabled: () => calls.length === 0 } : {}),
  });
}

describe("OpenAI Agents SDK (Responses API)", () => {
  it("reports a turn cut by maxTokens as the SDK's incomplete error, streamed and not", async () => {
    // The random-weight model never stops on its own, so a plain text run always hits the limit: the SDK must
    // see OpenAI's `incomplete` status (and the `response.incomplete` event), not a completed answer nor a 400.
    const agent = new Agent({
      name: "chat",
      instructions: "Be brief.",
      model: "mol",
      modelSettings: { maxTokens: 8 },
    });
    await expect(runner.run(agent, "say hello")).rejects.toThrow(/response\.incomplete/);
    const streamed = await runner.run(agent, "say hello again", { stream: true });
    const deltas: string[] = [];
    const drained = (async () => {
      for await (const delta of streamed.toTextStream()) deltas.push(delta);
    })();
    await expect(streamed.completed).rejects.toThrow(/response\.incomplete/);
    await drained.catch(() => undefined);
    expect(deltas.length).toBeGreaterThan(0);
  });

  it("runs a plain agent to a structured final output, streamed and not", async () => {
    const agent = new Agent({
      name: "reporter",
      instructions: "Report the weather.",
      model: "mol",
      modelSettings: { maxTokens: 256 },
      outputType: reportSchema,
    });
    const result = await runner.run(agent, "Report the weather in Rome.");
    expect(reportSchema.parse(result.finalOutput)).toEqual(result.finalOutput);
    expect(result.newItems.map((item) => item.type)).toEqual(["message_output_item"]);

    const streamed = await runner.run(agent, "Report the weather in Lima.", { stream: true });
    const deltas: string[] = [];
    for await (const delta of streamed.toTextStream()) deltas.push(delta);
    await streamed.completed;
    expect(reportSchema.parse(JSON.parse(deltas.join("")))).toEqual(streamed.finalOutput);
  });

  it("runs an agent whose required tool call ends the run with the tool's output", async () => {
    const calls: Array<z.infer<typeof weatherSchema>> = [];
    const agent = new Agent({
      name: "weather",
      instructions: "Answer weather questions with the get_weather tool.",
      model: "mol",
      tools: [weatherTool(calls)],
      modelSettings: { toolChoice: "required", parallelToolCalls: false, maxTokens: 128 },
      toolUseBehavior: "stop_on_first_tool",
    });
    const result = await runner.run(agent, "What is the weather in Paris?", { maxTurns: 2 });
    expect(calls).toHaveLength(1);
    expect(weatherSchema.safeParse(calls[0]).success).toBe(true);
    expect(result.finalOutput).toBe(`21 degrees in ${calls[0]?.city}`);
    expect(result.newItems.map((item) => item.type)).toEqual(["tool_call_item", "tool_call_output_item"]);
    expect(result.rawResponses[0]?.responseId).toMatch(/^resp_/);
  });

  it("streams a two-call run: the tool's output goes back as input, then a finish tool ends it", async () => {
    const calls: Array<z.infer<typeof weatherSchema>> = [];
    // Each model call offers exactly one tool and requires it, so the random model's path is fixed: look up,
    // then (with the call and its output in the input) finish.
    const finish = tool({
      name: "finish",
      description: "Give the final answer",
      parameters: z.object({ answer: z.string().max(24) }),
      execute: ({ answer }) => answer,
      isEnabled: () => calls.length > 0,
    });
    const agent = new Agent({
      name: "weather",
      instructions: "Look the weather up, then finish.",
      model: "mol",
      tools: [weatherTool(calls, true), finish],
      modelSettings: { toolChoice: "required", parallelToolCalls: false, maxTokens: 128 },
      resetToolChoice: false,
      toolUseBehavior: { stopAtToolNames: ["finish"] },
    });
    const streamed = await runner.run(agent, "What is the weather in Oslo?", { stream: true, maxTurns: 3 });
    const events: string[] = [];
    for await (const event of streamed) if (event.type === "run_item_stream_event") events.push(event.name);
    await streamed.completed;
    expect(calls).toHaveLength(1);
    expect(weatherSchema.safeParse(calls[0]).success).toBe(true);
    expect(streamed.rawResponses).toHaveLength(2);
    expect(events).toEqual(["tool_called", "tool_output", "tool_called", "tool_output"]);
    expect(typeof streamed.finalOutput).toBe("string");
  });

  it("sends the tool's output back and ends with a structured final output", async () => {
    const calls: Array<z.infer<typeof weatherSchema>> = [];
    // The tool is offered (and required) once; the second model call sees the call and its output, and answers
    // in the report schema.
    const agent = new Agent({
      name: "reporter",
      instructions: "Look the weather up, then report it.",
      model: "mol",
      tools: [weatherTool(calls, true)],
      modelSettings: { toolChoice: "required", parallelToolCalls: false, maxTokens: 256 },
      outputType: reportSchema,
    });
    const result = await runner.run(agent, "Report the weather in Oslo.", { maxTurns: 3 });
    expect(calls).toHaveLength(1);
    expect(result.rawResponses).toHaveLength(2);
    expect(reportSchema.parse(result.finalOutput)).toEqual(result.finalOutput);
    expect(result.newItems.map((item) => item.type)).toEqual([
      "tool_call_item",
      "tool_call_output_item",
      "message_output_item",
    ]);
  });
});
