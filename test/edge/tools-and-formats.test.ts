import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkJsonSchemaSubset, type SubsetSchema } from "../../schema/tools/json-schema-subset.ts";
import { validateJsonValue } from "../../schema/tools/validate-json-value.ts";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * Function calling and structured outputs through the real mesh (nats-server, llama.cpp on the tiny random
 * model, the edge in workerd), with the official openai client. The model's weights are random, so the tests
 * force a call (`required`, a named function): only the grammar makes the output a valid call.
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

const WEATHER_PARAMETERS = {
  type: "object",
  properties: { unit: { enum: ["c", "f"] }, rain: { type: "boolean" } },
  required: ["unit", "rain"],
  additionalProperties: false,
} as const;
const WEATHER_SCHEMA = checkSchema(WEATHER_PARAMETERS);
const RESPONSE_TOOLS: OpenAI.Responses.FunctionTool[] = [
  { type: "function", name: "get_weather", parameters: { ...WEATHER_PARAMETERS }, strict: true },
  {
    type: "function",
    name: "noop",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    strict: true,
  },
];
const CHAT_TOOLS: OpenAI.Chat.ChatCompletionFunctionTool[] = RESPONSE_TOOLS.map((tool) => ({
  type: "function",
  function: { name: tool.name, parameters: tool.parameters ?? {}, strict: true },
}));
const BUDGET = 160;

function checkSchema(schema: unknown): SubsetSchema {
  const check = checkJsonSchemaSubset(schema, { rootObject: true });
  if (!check.ok) throw new Error(check.issue.message);
  return check.schema;
}

function expectValidArguments(name: string, args: string): void {
  const schema = name === "get_weather" ? WEATHER_SCHEMA : checkSchema(RESPONSE_TOOLS[1]?.parameters);
  expect(validateJsonValue(schema, JSON.parse(args)), args).toBeNull();
}

async function expect400(promise: Promise<unknown>): Promise<APIError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  expect((error as APIError).status).toBe(400);
  expect((error as APIError).type).toBe("invalid_request_error");
  return error as APIError;
}

async function conversationCount(): Promise<number> {
  const listed = (await (await mesh.api("/v1/conversations?limit=100")).json()) as { data: unknown[] };
  return listed.data.length;
}

describe("function calling and structured outputs through the mesh", () => {
  it("Responses: a named function call, echoed fields, then its result in the next turn", async () => {
    const response = await client.responses.create({
      input: "what is the weather?",
      tools: RESPONSE_TOOLS,
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      temperature: 0.7,
      top_p: 0.9,
      max_output_tokens: BUDGET,
    });
    expect(response.status).toBe("completed");
    expect(response.tools.map((tool) => (tool as OpenAI.Responses.FunctionTool).name)).toEqual([
      "get_weather",
      "noop",
    ]);
    expect(response.tool_choice).toEqual({ type: "function", name: "get_weather" });
    expect(response.parallel_tool_calls).toBe(false);
    expect(response.temperature).toBe(0.7);
    expect(response.top_p).toBe(0.9);
    expect(response.max_output_tokens).toBe(BUDGET);
    expect(response.text?.format).toEqual({ type: "text" });
    expect(response.output).toHaveLength(1);
    const call = response.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.type).toBe("function_call");
    expect(call.name).toBe("get_weather");
    expect(call.status).toBe("completed");
    expect(call.call_id).toMatch(/^call_/);
    expectValidArguments(call.name, call.arguments);
    // Placement chose a node whose heartbeat lists the tools feature (not the blind queue group).
    const { mol } = response as unknown as { mol: { placement: { answer?: { reason: string } } } };
    expect(mol.placement.answer?.reason).toMatch(/^(warm|least-loaded|spill)$/);
    // GET echoes what the POST did.
    const again = await client.responses.retrieve(response.id);
    expect(again.output).toEqual(response.output);
    expect(again.tool_choice).toEqual({ type: "function", name: "get_weather" });

    const next = await client.responses.create({
      previous_response_id: response.id,
      // The AI SDK sends its earlier call back as a reference to the call item.
      input: [
        { type: "item_reference", id: call.id ?? "" },
        { type: "function_call_output", call_id: call.call_id, output: '{"temp": 21}' },
      ],
      tools: RESPONSE_TOOLS,
      tool_choice: "none",
      max_output_tokens: 16,
    });
    expect(["completed", "incomplete"]).toContain(next.status);
    expect(next.output[0]?.type).toBe("message");

    const unknown = await expect400(
      client.responses.create({
        previous_response_id: next.id,
        input: [{ type: "function_call_output", call_id: "call_nope", output: "x" }],
      }),
    );
    expect(unknown.param).toBe("input[0].call_id");
  });

  it("Chat Completions: a required call, then the tool's result as a tool message", async () => {
    const completion = await client.chat.completions.create({
      model: "mol",
      messages: [{ role: "user", content: "weather?" }],
      tools: CHAT_TOOLS,
      tool_choice: "required",
      // One call: with up to 8 parallel calls the random-weights model could spend the whole budget on calls.
      parallel_tool_calls: false,
      max_completion_tokens: BUDGET,
    });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    const calls = (choice?.message.tool_calls ?? []) as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.type).toBe("function");
      expectValidArguments(call.function.name, call.function.arguments);
    }
    const answer = await client.chat.completions.create({
      model: "mol",
      messages: [
        { role: "user", content: "weather?" },
        // The message as the API returned it (refusal, annotations, …): the most common client pattern.
        choice?.message ?? { role: "assistant", content: null },
        ...calls.map((call) => ({ role: "tool" as const, tool_call_id: call.id, content: "sunny" })),
      ],
      tools: CHAT_TOOLS,
      tool_choice: "none",
      max_completion_tokens: 16,
    });
    expect(typeof answer.choices[0]?.message.content).toBe("string");
    expect(["stop", "length"]).toContain(answer.choices[0]?.finish_reason);
  });

  it("takes a schema sent without strict with value hints it cannot hold, and decodes the rest", async () => {
    // As public tool definitions are written: a number with "format": "float", a pattern, an OpenAPI example.
    const parameters = {
      type: "object",
      properties: {
        amount: { type: "number", format: "float", example: 1.5 },
        currency: { type: "string", pattern: "^[A-Z]{3}$", maxLength: 3 },
      },
      required: ["amount", "currency"],
    };
    const completion = await client.chat.completions.create({
      model: "mol",
      messages: [{ role: "user", content: "pay 3 euros" }],
      tools: [{ type: "function", function: { name: "pay", parameters } }],
      tool_choice: "required",
      parallel_tool_calls: false,
      max_completion_tokens: BUDGET,
    });
    const [call] = (completion.choices[0]?.message.tool_calls ??
      []) as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
    const args = JSON.parse(call?.function.arguments ?? "null") as { amount?: unknown; currency?: unknown };
    expect(typeof args.amount).toBe("number");
    expect(typeof args.currency).toBe("string");
    // With strict: true the same schema is a contract it cannot hold: refused, naming the keyword.
    const strict = await expect400(
      client.chat.completions.create({
        model: "mol",
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name: "pay", parameters, strict: true } }],
      }),
    );
    expect(strict.param).toBe("tools[0].function.parameters");
    expect(strict.message).toContain('"format"');
  });

  it("json_schema output parses and validates on both APIs", async () => {
    const schema = {
      type: "object",
      properties: { answer: { enum: ["yes", "no"] }, sure: { type: "boolean" } },
      required: ["answer", "sure"],
      additionalProperties: false,
    };
    const response = await client.responses.create({
      input: "answer as JSON",
      text: { format: { type: "json_schema", name: "verdict", schema, strict: true } },
      max_output_tokens: BUDGET,
    });
    expect(response.status).toBe("completed");
    expect(response.text?.format).toMatchObject({ type: "json_schema", name: "verdict", strict: true });
    expect(validateJsonValue(checkSchema(schema), JSON.parse(response.output_text))).toBeNull();

    const completion = await client.chat.completions.create({
      model: "mol",
      messages: [{ role: "user", content: "answer as JSON" }],
      response_format: { type: "json_schema", json_schema: { name: "verdict", schema, strict: true } },
      max_completion_tokens: BUDGET,
    });
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    const content = completion.choices[0]?.message.content ?? "";
    expect(validateJsonValue(checkSchema(schema), JSON.parse(content))).toBeNull();
  });

  it("streams a call: Responses events and Chat delta.tool_calls", async () => {
    const stream = await client.responses.create({
      input: "weather, streamed",
      tools: RESPONSE_TOOLS,
      tool_choice: "required",
      parallel_tool_calls: false,
      max_output_tokens: BUDGET,
      stream: true,
    });
    const types: string[] = [];
    let deltas = "";
    let done: OpenAI.Responses.ResponseFunctionToolCall | undefined;
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.function_call_arguments.delta") deltas += event.delta;
      if (event.type === "response.output_item.done" && event.item.type === "function_call")
        done = event.item;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(types.slice(0, 3)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
    ]);
    expect(types).toContain("response.function_call_arguments.done");
    expect(types.at(-2)).toBe("response.output_item.done");
    expect(types.at(-1)).toBe("response.completed");
    expect(done?.arguments).toBe(deltas);
    expectValidArguments(done?.name ?? "", deltas);
    expect(completed?.output).toEqual([done]);

    const chunks = await client.chat.completions.create({
      model: "mol",
      messages: [{ role: "user", content: "weather, streamed" }],
      tools: CHAT_TOOLS,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      max_completion_tokens: BUDGET,
      stream: true,
    });
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let finish: string | null = null;
    for await (const chunk of chunks) {
      const choice = chunk.choices[0];
      for (const delta of choice?.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: "", name: "", arguments: "" };
        call.id ||= delta.id ?? "";
        call.name ||= delta.function?.name ?? "";
        call.arguments += delta.function?.arguments ?? "";
        calls.set(delta.index, call);
      }
      finish = choice?.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expect([...calls.values()].map((call) => call.name)).toEqual(["get_weather"]);
    for (const call of calls.values()) {
      expect(call.id).toMatch(/^call_/);
      expectValidArguments(call.name, call.arguments);
    }
  });

  it("auto: the answer is text or valid calls; store: false takes calls and results in its input", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await client.responses.create({
        input: `weather ${i}?`,
        store: false,
        tools: RESPONSE_TOOLS,
        max_output_tokens: BUDGET,
      });
      for (const item of response.output) {
        if (item.type === "function_call") expectValidArguments(item.name, item.arguments);
        else expect(item.type).toBe("message");
      }
    }
    const stateless = await client.responses.create({
      store: false,
      input: [
        { role: "user", content: "weather?" },
        {
          type: "function_call",
          call_id: "call_x",
          name: "get_weather",
          arguments: '{"unit": "c", "rain": false}',
        },
        { type: "function_call_output", call_id: "call_x", output: "21 degrees" },
      ],
      tools: RESPONSE_TOOLS,
      tool_choice: "none",
      max_output_tokens: 16,
    });
    expect((stateless as { store?: boolean }).store).toBe(false);
    expect(stateless.output[0]?.type).toBe("message");
  });

  it("refuses bad tools and formats with a 400 naming the param, and stores nothing", async () => {
    const before = await conversationCount();
    const tool = (parameters: Record<string, unknown>): OpenAI.Responses.FunctionTool => ({
      type: "function",
      name: "f",
      parameters,
      strict: true,
    });
    const pattern = await expect400(
      client.responses.create({
        input: "x",
        tools: [tool({ type: "object", properties: { s: { type: "string", pattern: "^a" } } })],
      }),
    );
    expect(pattern.param).toBe("tools[0].parameters");
    expect(pattern.message).toContain('"pattern"');

    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) deep = { type: "object", properties: { a: deep } };
    const tooDeep = await expect400(client.responses.create({ input: "x", tools: [tool(deep)] }));
    expect(tooDeep.param).toBe("tools[0].parameters");

    const twice = await expect400(
      client.responses.create({
        input: "x",
        tools: [tool({ type: "object", properties: {} }), tool({ type: "object", properties: {} })],
      }),
    );
    expect(twice.param).toBe("tools[1].name");

    const unknownChoice = await expect400(
      client.responses.create({
        input: "x",
        tools: RESPONSE_TOOLS,
        tool_choice: { type: "function", name: "missing" },
      }),
    );
    expect(unknownChoice.param).toBe("tool_choice");

    const unknownCall = await expect400(
      client.responses.create({
        input: [{ type: "function_call_output", call_id: "call_nope", output: "x" }],
      }),
    );
    expect(unknownCall.param).toBe("input[0].call_id");

    const format = await expect400(
      client.responses.create({
        input: "x",
        text: {
          format: {
            type: "json_schema",
            name: "o",
            schema: { type: "object", properties: {}, minProperties: 1 },
            strict: true,
          },
        },
      }),
    );
    expect(format.param).toBe("text.format.schema");
    expect(format.message).toContain('"minProperties"');

    const chatPattern = await expect400(
      client.chat.completions.create({
        model: "mol",
        messages: [{ role: "user", content: "x" }],
        tools: [
          {
            type: "function",
            function: {
              name: "f",
              parameters: { type: "object", properties: { s: { type: "string", format: "email" } } },
              strict: true,
            },
          },
        ],
      }),
    );
    expect(chatPattern.param).toBe("tools[0].function.parameters");
    expect(chatPattern.message).toContain('"format"');

    const chatChoice = await expect400(
      client.chat.completions.create({
        model: "mol",
        messages: [{ role: "user", content: "x" }],
        tools: CHAT_TOOLS,
        tool_choice: { type: "function", function: { name: "missing" } },
      }),
    );
    expect(chatChoice.param).toBe("tool_choice");

    const chatUnknownCall = await expect400(
      client.chat.completions.create({
        model: "mol",
        messages: [
          { role: "user", content: "x" },
          { role: "tool", tool_call_id: "call_nope", content: "x" },
        ],
      }),
    );
    expect(chatUnknownCall.param).toBe("messages[1].tool_call_id");

    expect(await conversationCount()).toBe(before);
  });
});
