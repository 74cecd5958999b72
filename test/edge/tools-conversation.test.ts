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
const FIRST_TOOLS = [WEATHER];
const SECOND_TOOLS = [WEATHER, NOOP];

type Step = {
  tools: OpenAI.Responses.FunctionTool[];
  /** Forces a call of this tool; otherwise the turn answers in text (`tool_choice: "none"`). */
  call?: string;
  /** Sends the previous turn's call's result as this turn's input. */
  result?: string;
  text?: string;
};
const STEPS: Step[] = [
  { tools: FIRST_TOOLS, text: "hi" },
  { tools: FIRST_TOOLS, call: "get_weather", text: "weather in Paris?" },
  { tools: FIRST_TOOLS, result: '{"temp": 21}' },
  { tools: FIRST_TOOLS, text: "and tomorrow?" },
  // The tool set changes: one `tools_changed` event appended, the views' prefix stays.
  { tools: SECOND_TOOLS, call: "noop", text: "reset" },
  { tools: SECOND_TOOLS, result: "ok" },
  { tools: SECOND_TOOLS, text: "thanks" },
  { tools: SECOND_TOOLS, call: "get_weather", text: "and in Rome?" },
  { tools: SECOND_TOOLS, result: '{"temp": 14}' },
  { tools: SECOND_TOOLS, text: "bye" },
];

describe("a stored conversation with tools", () => {
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
        // One call per call turn: the random model under the grammar could otherwise run a call array to length.
        parallel_tool_calls: false,
        max_output_tokens: step.call ? 160 : 8,
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

  it("lists calls and tool results as OpenAI's function_call and function_call_output items", async () => {
    const conversation = await client.conversations.create({});
    const base = { conversation: conversation.id, model: "mol:agent", tools: [WEATHER] };
    const called = await client.responses.create({
      ...base,
      input: "weather?",
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      max_output_tokens: 160,
    });
    const call = called.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.type).toBe("function_call");
    const answered = await client.responses.create({
      ...base,
      input: [{ type: "function_call_output", call_id: call.call_id, output: '{"temp": 21}' }],
      tool_choice: "none",
      max_output_tokens: 8,
    });
    // An item array whose earlier items are a call and its result (as the Agents SDK sends history).
    const carried = await client.responses.create({
      ...base,
      input: [
        { type: "function_call", call_id: "call_ctx", name: "get_weather", arguments: '{"unit": "f"}' },
        { type: "function_call_output", call_id: "call_ctx", output: "70" },
        { role: "user", content: "thanks" },
      ],
      tool_choice: "none",
      max_output_tokens: 8,
    });

    const items = (await client.conversations.items.list(conversation.id, { order: "asc" })).data;
    const shapes = items.map((item) => {
      if (item.type === "message") return `${item.role} message`;
      return item.type;
    });
    expect(shapes).toEqual([
      "user message",
      "function_call",
      "function_call_output",
      "assistant message",
      "function_call",
      "function_call_output",
      "user message",
      "assistant message",
    ]);
    // The call item is the response's output item (same id, so an `item_reference` to it resolves).
    expect(items[1]).toEqual({ ...call, status: "completed" });
    const result = items[2] as { id: string; call_id: string; output: string; status: string };
    expect(result).toMatchObject({ call_id: call.call_id, output: '{"temp": 21}', status: "completed" });
    expect(result.id).toMatch(/^fco_/);
    expect(items[4]).toMatchObject({
      call_id: "call_ctx",
      name: "get_weather",
      arguments: '{"unit": "f"}',
      status: "completed",
    });
    expect(items[5]).toMatchObject({ type: "function_call_output", call_id: "call_ctx", output: "70" });
    // No rendered view text leaks into what the client reads back.
    expect(JSON.stringify(items)).not.toContain("tool result (");

    // One item by id, and a page after a call item.
    const one = await mesh.api(`/v1/conversations/${conversation.id}/items/${result.id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(result);
    const after = await client.conversations.items.list(conversation.id, {
      order: "asc",
      after: call.id ?? "",
    });
    expect(after.data[0]?.id).toBe(result.id);

    // A response's input items: the tool result it was; the carried call and result, then the message.
    const answeredInput = (await client.responses.inputItems.list(answered.id)).data;
    expect(answeredInput).toEqual([result]);
    const carriedInput = (await client.responses.inputItems.list(carried.id, { order: "asc" })).data;
    expect(carriedInput.map((item) => item.type)).toEqual([
      "function_call",
      "function_call_output",
      "message",
    ]);
    expect(carriedInput[0]).toEqual(items[4]);
    expect(carriedInput[1]).toEqual(items[5]);
  });
});
