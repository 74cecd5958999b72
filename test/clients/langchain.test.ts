import { AIMessage, HumanMessage, SystemMessage, type UsageMetadata } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;

beforeAll(async () => {
  mesh = await startTestMesh();
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

/** LangChain's ChatOpenAI, unchanged: for a model it does not know it speaks Chat Completions. */
function chatModel(maxTokens: number): ChatOpenAI {
  return new ChatOpenAI({
    model: "mol",
    apiKey: TEST_API_KEY,
    configuration: { baseURL: `${mesh.edge.url}/v1` },
    maxRetries: 0,
    maxTokens,
  });
}

// Strings and arrays are bounded: the random-weight model only ever closes them because the grammar must.
const weatherSchema = z.object({ city: z.string().max(16), unit: z.enum(["celsius", "fahrenheit"]) });
const getWeather = tool(({ city }) => `21 degrees in ${city}`, {
  name: "get_weather",
  description: "The current weather in a city",
  schema: weatherSchema,
});
const recipeSchema = z.object({
  title: z.string().max(24),
  servings: z.number(),
  vegetarian: z.boolean(),
  tags: z.array(z.string().max(12)).max(3),
});

describe("LangChain ChatOpenAI (Chat Completions)", () => {
  it("answers a system prompt and a history, invoked and streamed", async () => {
    const messages = [
      new SystemMessage("You are terse."),
      new HumanMessage("name a colour"),
      new AIMessage("Blue."),
      new HumanMessage("and another one"),
    ];
    const answer = await chatModel(16).invoke(messages);
    expect(typeof answer.content).toBe("string");
    expect((answer.content as string).length).toBeGreaterThan(0);
    // Its declared type infers to `never` under this repo's strict options; at run time it is UsageMetadata.
    const usage = answer.usage_metadata as UsageMetadata | undefined;
    expect(usage?.output_tokens).toBeGreaterThan(0);

    const chunks: string[] = [];
    for await (const chunk of await chatModel(16).stream(messages)) chunks.push(chunk.text);
    expect(chunks.join("").length).toBeGreaterThan(0);
  });

  it("bindTools with a forced tool: the tool call's arguments validate and the tool runs on them", async () => {
    const model = chatModel(128).bindTools([getWeather], { tool_choice: "get_weather" });
    const answer = await model.invoke("What is the weather in Paris?");
    expect(answer.tool_calls).toHaveLength(1);
    const [call] = answer.tool_calls ?? [];
    expect(call?.name).toBe("get_weather");
    expect(call?.id).toBeTruthy();
    const args = weatherSchema.parse(call?.args);
    const output = await getWeather.invoke(args);
    expect(output).toBe(`21 degrees in ${args.city}`);
  });

  it("withStructuredOutput returns an object that validates against the zod schema (json_schema)", async () => {
    const recipe = await chatModel(256).withStructuredOutput(recipeSchema).invoke("A recipe for pancakes");
    expect(recipeSchema.parse(recipe)).toEqual(recipe);
  });

  it("withStructuredOutput over function calling validates too", async () => {
    const recipe = await chatModel(256)
      .withStructuredOutput(recipeSchema, { method: "functionCalling" })
      .invoke("A recipe for pancakes");
    expect(recipeSchema.parse(recipe)).toEqual(recipe);
  });
});
