import { createOpenAI } from "@ai-sdk/openai";
import { generateText, hasToolCall, Output, streamText, tool, type LanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;
let model: LanguageModel;

beforeAll(async () => {
  mesh = await startTestMesh();
  // The AI SDK's OpenAI provider, unchanged: its default model speaks the Responses API.
  model = createOpenAI({ baseURL: `${mesh.edge.url}/v1`, apiKey: TEST_API_KEY })("mol");
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

/** The test model's weights are random: a turn cut by the token limit is finished too. */
const FINISHED = ["stop", "length"];
const SHORT = { maxOutputTokens: 16, maxRetries: 0 } as const;

// Strings and arrays are bounded: the random-weight model only ever closes them because the grammar must.
const weatherSchema = z.object({ city: z.string().max(16), unit: z.enum(["celsius", "fahrenheit"]) });
const recipeSchema = z.object({
  title: z.string().max(24),
  servings: z.number(),
  vegetarian: z.boolean(),
  tags: z.array(z.string().max(12)).max(3),
});

describe("Vercel AI SDK (@ai-sdk/openai, Responses API)", () => {
  it("streams a turn with a system prompt (instructions) and three messages", async () => {
    const result = streamText({
      model,
      instructions: "You are terse.",
      messages: [
        { role: "user", content: "name a colour" },
        { role: "assistant", content: "Blue." },
        { role: "user", content: "and another one" },
      ],
      ...SHORT,
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(0);
    expect(await result.text).toBe(deltas.join(""));
    expect(FINISHED).toContain(await result.finishReason);
    const usage = await result.usage;
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect((await result.finalStep).response.id).toMatch(/^resp_/);
  });

  it("generates a turn without tools", async () => {
    const result = await generateText({ model, prompt: "say hello", ...SHORT });
    expect(FINISHED).toContain(result.finishReason);
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.finalStep.response.id).toMatch(/^resp_/);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it("calls a named tool: arguments validate against its schema and the tool runs", async () => {
    const calls: Array<z.infer<typeof weatherSchema>> = [];
    const result = await generateText({
      model,
      prompt: "What is the weather in Paris?",
      tools: {
        get_weather: tool({
          description: "The current weather in a city",
          inputSchema: weatherSchema,
          execute: (input) => {
            calls.push(input);
            return Promise.resolve({ temperature: 21 });
          },
        }),
      },
      toolChoice: { type: "tool", toolName: "get_weather" },
      maxOutputTokens: 128,
      maxRetries: 0,
    });
    expect(result.finishReason).toBe("tool-calls");
    expect(result.toolCalls).toHaveLength(1);
    const [call] = result.toolCalls;
    expect(call?.toolName).toBe("get_weather");
    expect(weatherSchema.safeParse(call?.input).success).toBe(true);
    expect(calls).toEqual([call?.input]);
    expect(result.toolResults.map((r) => r.output)).toEqual([{ temperature: 21 }]);
  });

  it("runs two steps: the call and its result go back as input items, then a finish tool ends the loop", async () => {
    const calls: Array<z.infer<typeof weatherSchema>> = [];
    const result = await generateText({
      model,
      prompt: "What is the weather in Paris?",
      tools: {
        get_weather: tool({
          description: "The current weather in a city",
          inputSchema: weatherSchema,
          execute: (input) => {
            calls.push(input);
            return Promise.resolve({ temperature: 21 });
          },
        }),
        finish: tool({
          description: "Give the final answer",
          inputSchema: z.object({ answer: z.string().max(24) }),
          execute: ({ answer }) => Promise.resolve(answer),
        }),
      },
      // One tool per step, required: the random model's path is fixed.
      prepareStep: ({ stepNumber }) => ({
        toolChoice: { type: "tool", toolName: stepNumber === 0 ? "get_weather" : "finish" },
      }),
      stopWhen: hasToolCall("finish"),
      maxOutputTokens: 128,
      maxRetries: 0,
    });
    expect(calls).toHaveLength(1);
    expect(result.steps.map((step) => step.toolCalls.map((call) => call.toolName))).toEqual([
      ["get_weather"],
      ["finish"],
    ]);
    expect(result.steps[1]?.response.id).toMatch(/^resp_/);
  });

  it("streams a required tool call: the streamed call parts match the validated input", async () => {
    const result = streamText({
      model,
      prompt: "What is the weather in Paris?",
      tools: {
        get_weather: tool({ description: "The current weather in a city", inputSchema: weatherSchema }),
      },
      toolChoice: "required",
      maxOutputTokens: 128,
      maxRetries: 0,
    });
    const parts: string[] = [];
    let streamedInput = "";
    for await (const part of result.stream) {
      parts.push(part.type);
      if (part.type === "tool-input-delta") streamedInput += part.delta;
    }
    expect(parts).toEqual(expect.arrayContaining(["tool-input-start", "tool-input-delta", "tool-call"]));
    expect(await result.finishReason).toBe("tool-calls");
    const [call] = await result.toolCalls;
    expect(call?.toolName).toBe("get_weather");
    expect(weatherSchema.parse(call?.input)).toEqual(JSON.parse(streamedInput));
  });

  it("produces an object that validates against a zod schema (Output.object)", async () => {
    const result = await generateText({
      model,
      prompt: "A recipe for pancakes",
      output: Output.object({ schema: recipeSchema, name: "recipe" }),
      maxOutputTokens: 256,
      maxRetries: 0,
    });
    expect(recipeSchema.parse(result.output)).toEqual(result.output);
    expect(result.finishReason).toBe("stop");
  });

  it("takes zod's integers: z.int() is a JSON-schema integer with minimum/maximum at the safe-integer bounds", async () => {
    const countSchema = z.object({ count: z.int(), even: z.boolean() });
    const result = await generateText({
      model,
      prompt: "Count the planets",
      output: Output.object({ schema: countSchema }),
      maxOutputTokens: 64,
      maxRetries: 0,
    });
    expect(countSchema.parse(result.output)).toEqual(result.output);
  });
});
