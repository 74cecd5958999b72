import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * KV reuse of a stored conversation with function tools (issue 14's closing figure), through the real mesh on
 * the tiny model: a call turn, its `function_call_output` turn, text turns and one change of the tool set
 * midway. Every turn is forced onto one specialist, so each answer hop continues the same (conversation,
 * adapter) view; the test holds that view to growing only at its end: from turn 2 on the answer hop finds the
 * previous turn's whole prompt in the KV cache.
 */
let mesh: TestMesh;
let client: OpenAI;

beforeAll(async () => {
  mesh = await startTestMesh();
  client = new OpenAI({ apiKey: TEST_API_KEY, baseURL: `${mesh.edge.url}/v1`, maxRetries: 0 });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

type HopUsage = { promptTokens: number; cachedPromptTokens: number };
type Mol = { label: string; source: string; usage: { answer?: HopUsage } };

const objectOf = (properties: Record<string, unknown>): Record<string, unknown> => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const WEATHER: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  parameters: objectOf({ unit: { enum: ["c", "f"] } }),
  strict: true,
};
const NOOP: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "noop",
  parameters: objectOf({}),
  strict: true,
};
const LOOKUP: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "lookup",
  parameters: objectOf({ id: { enum: [1, 2, 3] } }),
  strict: true,
};
const FIRST_TOOLS = [WEATHER, NOOP];
const SECOND_TOOLS = [WEATHER, LOOKUP];

type Step = {
  tools: OpenAI.Responses.FunctionTool[];
  /** Forces a call of this tool; otherwise the turn answers in text (`tool_choice: "none"`). */
  call?: string;
  /** Sends the previous turn's call's result as this turn's input. */
  result?: string;
  text?: string;
};
const STEPS: Step[] = [
  { tools: FIRST_TOOLS, text: "hello, can you help with the weather?" },
  { tools: FIRST_TOOLS, call: "get_weather", text: "what is the weather in Paris?" },
  { tools: FIRST_TOOLS, result: '{"temp": 21, "sky": "clear"}' },
  { tools: FIRST_TOOLS, text: "and tomorrow?" },
  // The tool set changes: one `tools_changed` event appended, the views' prefix stays.
  { tools: SECOND_TOOLS, call: "lookup", text: "look up order 2" },
  { tools: SECOND_TOOLS, result: '{"order": 2, "status": "shipped"}' },
  { tools: SECOND_TOOLS, text: "thanks, when does it arrive?" },
  { tools: SECOND_TOOLS, call: "get_weather", text: "weather at the destination?" },
  { tools: SECOND_TOOLS, result: '{"temp": 14}' },
  { tools: SECOND_TOOLS, text: "summarize everything" },
];

describe("KV reuse over a 10-turn stored conversation with tools", () => {
  it("each answer hop finds the previous turn's whole view in the KV cache", async () => {
    const conversation = await client.conversations.create({});
    const rows: Array<{ turn: number; kind: string; prompt: number; cached: number; previous: number }> = [];
    let previousPrompt = 0;
    let lastCall: OpenAI.Responses.ResponseFunctionToolCall | undefined;
    for (const [index, step] of STEPS.entries()) {
      const input: OpenAI.Responses.ResponseInput | string = step.result
        ? [{ type: "function_call_output", call_id: lastCall?.call_id ?? "", output: step.result }]
        : (step.text ?? "");
      const response = await client.responses.create({
        conversation: conversation.id,
        model: "mol:agent",
        input,
        tools: step.tools,
        tool_choice: step.call ? { type: "function", name: step.call } : "none",
        max_output_tokens: step.call ? 160 : 12,
      });
      const mol = (response as unknown as { mol: Mol }).mol;
      expect(mol).toMatchObject({ label: "agent", source: "forced" });
      if (step.call) {
        lastCall = response.output.find(
          (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === "function_call",
        );
        expect(lastCall?.name).toBe(step.call);
      } else {
        expect(response.output[0]?.type).toBe("message");
      }
      const usage = mol.usage.answer;
      if (!usage) throw new Error(`turn ${index + 1} reported no answer hop usage`);
      const kind = step.call ? "call" : step.result ? "tool result" : "text";
      rows.push({
        turn: index + 1,
        kind,
        prompt: usage.promptTokens,
        cached: usage.cachedPromptTokens,
        previous: previousPrompt,
      });
      previousPrompt = usage.promptTokens;
    }
    const later = rows.slice(1);
    const cached = later.reduce((n, row) => n + row.cached, 0);
    const prompt = later.reduce((n, row) => n + row.prompt, 0);
    console.log(
      [
        "turn | kind        | answer prompt | cached | previous prompt",
        ...rows.map(
          (row) =>
            `${String(row.turn).padStart(4)} | ${row.kind.padEnd(11)} | ${String(row.prompt).padStart(13)} | ` +
            `${String(row.cached).padStart(6)} | ${String(row.previous).padStart(15)}`,
        ),
        `turns 2-10: ${cached} of ${prompt} answer prompt tokens cached (${((100 * cached) / prompt).toFixed(1)} %)`,
      ].join("\n"),
    );
    // The view only grew at its end: the previous turn's whole prompt is this turn's cached prefix.
    for (const row of later) expect(row.cached, `turn ${row.turn}`).toBeGreaterThanOrEqual(row.previous);
    expect(cached / prompt).toBeGreaterThan(0.8);
  });
});
