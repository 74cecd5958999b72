import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createChatCompletionBodySchema } from "../../workers/src/api/schemas/create-chat-completion-body-schema.ts";
import {
  createResponseBodySchema,
  readResponseInput,
} from "../../workers/src/api/schemas/create-response-body-schema.ts";
import { toOutputConstraint } from "../../workers/src/api/schemas/tool-fields.ts";
import { formatChatCompletion } from "../../workers/src/api/format/format-chat-completion.ts";
import { formatResponseObject } from "../../workers/src/api/format/format-response-object.ts";
import { createChatCompletionEventStream } from "../../workers/src/api/sse/create-chat-completion-event-stream.ts";
import { createResponsesEventStream } from "../../workers/src/api/sse/create-responses-event-stream.ts";
import { replayTurnParts } from "../../workers/src/conversation/replay-turn-parts.ts";
import { renderToolCallText } from "../../workers/src/conversation/tool-turn-text.ts";
import type { TurnRecord, TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import { collect, createClientFor } from "./sse-client.ts";
import { makeSource, makeStartTurn, makeTurn } from "./turn-fixtures.ts";

const CALLS = [
  { id: "call_a", name: "get_weather", arguments: '{"city": "Oslo"}' },
  { id: "call_b", name: "add", arguments: '{"a": 1, "b": 2}' },
];
const TOOLS = [
  { type: "function", name: "get_weather", parameters: { type: "object", properties: {} } },
  { type: "function", name: "add", description: "sum", parameters: { type: "object", properties: {} } },
];
const called = makeTurn({
  answerText: "",
  finishReason: "tool_calls",
  toolCalls: CALLS,
  response: { tools: TOOLS, toolChoice: "required", parallelToolCalls: true },
});

/** The parts of an answer that made both calls, each call's arguments in two slices. */
function callParts(turn: TurnRecord = called): TurnStreamPart[] {
  const slices = CALLS.flatMap((call, index) => {
    const half = Math.floor(call.arguments.length / 2);
    return [call.arguments.slice(0, half), call.arguments.slice(half)].map(
      (argumentsDelta): TurnStreamPart => ({
        type: "tool-call-delta",
        index,
        id: call.id,
        name: call.name,
        argumentsDelta,
      }),
    );
  });
  return [{ type: "turn-start", turn: makeStartTurn(turn) }, ...slices, { type: "turn-finish", turn }];
}

describe("function calls as the APIs show them", { timeout: 5000 }, () => {
  it("a response: function_call items, the tools and choice echoed in OpenAI's shape", () => {
    const response = formatResponseObject(called);
    expect(response.output).toEqual([
      {
        type: "function_call",
        id: "fc_01_0",
        call_id: "call_a",
        name: "get_weather",
        arguments: CALLS[0]?.arguments,
        status: "completed",
      },
      {
        type: "function_call",
        id: "fc_01_1",
        call_id: "call_b",
        name: "add",
        arguments: CALLS[1]?.arguments,
        status: "completed",
      },
    ]);
    expect(response.tools).toEqual([
      {
        type: "function",
        name: "get_weather",
        description: null,
        parameters: TOOLS[0]?.parameters,
        strict: true,
      },
      { type: "function", name: "add", description: "sum", parameters: TOOLS[1]?.parameters, strict: true },
    ]);
    expect(response.tool_choice).toBe("required");
    expect(response.parallel_tool_calls).toBe(true);
    const plain = formatResponseObject(makeTurn());
    expect([plain.tool_choice, plain.tools, plain.text]).toEqual(["auto", [], { format: { type: "text" } }]);
    const named = formatResponseObject(
      makeTurn({ response: { toolChoice: { type: "function", name: "add" } } }),
    );
    expect(named.tool_choice).toEqual({ type: "function", name: "add" });
  });

  it("a chat completion: tool_calls, null content, finish_reason tool_calls", () => {
    const choice = formatChatCompletion(called).choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual(
      CALLS.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    );
  });

  it("streams each call as its own item: added, argument deltas, done, item done", async () => {
    const { iterable } = makeSource(callParts());
    const client = createClientFor(createResponsesEventStream(iterable));
    const events = await collect(await client.responses.create({ model: "mol", input: "hi", stream: true }));
    expect(
      events.map((event) => `${event.type}${"output_index" in event ? `@${event.output_index}` : ""}`),
    ).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added@0",
      "response.function_call_arguments.delta@0",
      "response.function_call_arguments.delta@0",
      "response.function_call_arguments.done@0",
      "response.output_item.done@0",
      "response.output_item.added@1",
      "response.function_call_arguments.delta@1",
      "response.function_call_arguments.delta@1",
      "response.function_call_arguments.done@1",
      "response.output_item.done@1",
      "response.completed",
    ]);
    const added = events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(added.item).toMatchObject({
      type: "function_call",
      call_id: "call_a",
      name: "get_weather",
      arguments: "",
      status: "in_progress",
    });
    const done = events.filter(
      (e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent =>
        e.type === "response.function_call_arguments.done",
    );
    expect(done.map((e) => [e.item_id, e.arguments])).toEqual([
      ["fc_01_0", CALLS[0]?.arguments],
      ["fc_01_1", CALLS[1]?.arguments],
    ]);
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.output).toEqual(formatResponseObject(called).output);
  });

  it("with tools, a text answer opens its message at the first delta", async () => {
    const turn = makeTurn({ answerText: "hi", response: { tools: TOOLS } });
    const parts: TurnStreamPart[] = [
      { type: "turn-start", turn: makeStartTurn(turn) },
      { type: "text-delta", delta: "hi" },
      { type: "turn-finish", turn },
    ];
    const client = createClientFor(createResponsesEventStream(makeSource(parts).iterable));
    const events = await collect(await client.responses.create({ model: "mol", input: "hi", stream: true }));
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  it("streams chat delta.tool_calls: index, id and name first, then argument fragments", async () => {
    const { iterable } = makeSource(callParts());
    const client = createClientFor(
      createChatCompletionEventStream(iterable, { id: "chatcmpl-1", model: "mol", created: 1 }),
    );
    const chunks = await collect(
      await client.chat.completions.create({
        model: "mol",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    );
    const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({
      index: 0,
      id: "call_a",
      type: "function",
      function: { name: "get_weather", arguments: "" },
    });
    expect(deltas[1]).toEqual({ index: 0, function: { arguments: CALLS[0]?.arguments.slice(0, 8) } });
    const joined = [0, 1].map((index) =>
      deltas
        .filter((delta) => delta.index === index)
        .map((delta) => delta.function?.arguments ?? "")
        .join(""),
    );
    expect(joined).toEqual(CALLS.map((call) => call.arguments));
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(["tool_calls"]);
  });
});

describe("requests into tools, constraints and turn text", () => {
  const responseBody = createResponseBodySchema({ maxMessageBytes: 1 << 20 });
  const chatBody = createChatCompletionBodySchema({ maxMessageBytes: 1 << 20 });

  it("maps tool_choice and formats to the engine constraint; auto leaves the choice to the grammar", () => {
    const tools = [
      { type: "function" as const, name: "f", parameters: { type: "object" as const, properties: {} } },
    ];
    expect(toOutputConstraint({ tools, choice: { name: "f" }, parallel: false })).toMatchObject({
      type: "tools",
      choice: { name: "f" },
      parallel: false,
    });
    expect(toOutputConstraint({ tools })).toMatchObject({ type: "tools", choice: "auto", parallel: true });
    // A named tool is a forced function: exactly one call, whatever parallel_tool_calls says.
    expect(toOutputConstraint({ tools, choice: { name: "f" }, parallel: true })).toMatchObject({
      parallel: false,
    });
    expect(toOutputConstraint({ tools, choice: "none" })).toBeUndefined();
    expect(toOutputConstraint({ tools: [], format: { type: "json_object" } })).toEqual({
      type: "json_object",
    });
    const body = responseBody.parse({
      input: "x",
      text: {
        format: { type: "json_schema", name: "o", schema: { $schema: "x", type: "object", properties: {} } },
      },
    });
    expect(toOutputConstraint({ tools: [], format: body.text?.format })).toEqual({
      type: "json_schema",
      name: "o",
      schema: { type: "object", properties: {} },
    });
  });

  it("tools with a json_schema format are one constraint under auto; required calls; json_object is refused", () => {
    const tools = [
      { type: "function" as const, name: "f", parameters: { type: "object" as const, properties: {} } },
    ];
    const schema = { type: "object" as const, properties: { a: { type: "string" as const } } };
    const format = { type: "json_schema" as const, name: "o", schema };
    expect(toOutputConstraint({ tools, format })).toMatchObject({
      type: "tools",
      choice: "auto",
      format: { name: "o", schema },
    });
    expect(toOutputConstraint({ tools, format, choice: "none" })).toEqual({
      type: "json_schema",
      name: "o",
      schema,
    });
    const body = (extra: object) => ({ model: "mol", messages: [{ role: "user", content: "x" }], ...extra });
    const chatTools = [{ type: "function", function: { name: "f" } }];
    expect(
      chatBody.safeParse(
        body({
          tools: chatTools,
          response_format: { type: "json_schema", json_schema: { name: "o", schema } },
        }),
      ).success,
    ).toBe(true);
    const pair = responseBody.safeParse({
      input: "x",
      tools: [{ type: "function", name: "f" }],
      text: { format },
    });
    expect(pair.success).toBe(true);
    expect(
      chatBody.safeParse(body({ tools: chatTools, response_format: { type: "json_object" } })).error
        ?.issues[0]?.path,
    ).toEqual(["response_format"]);
  });

  it("takes optional properties unless strict: true, and refuses strict violations in OpenAI's words", () => {
    const optional = {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" } },
      required: ["a"],
    };
    const format = (strict?: boolean) => ({
      input: "x",
      text: {
        format: {
          type: "json_schema",
          name: "o",
          schema: optional,
          ...(strict === undefined ? {} : { strict }),
        },
      },
    });
    expect(responseBody.safeParse(format()).success).toBe(true);
    expect(responseBody.safeParse(format(false)).success).toBe(true);
    const strict = responseBody.safeParse(format(true));
    expect(strict.error?.issues[0]).toMatchObject({
      path: ["text", "format", "schema"],
      message:
        "Invalid schema for response_format 'o': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'.",
    });
    const tool = (parameters: unknown, strict: boolean) => ({
      model: "mol",
      messages: [{ role: "user", content: "x" }],
      tools: [{ type: "function", function: { name: "f", parameters, strict } }],
    });
    expect(chatBody.safeParse(tool(optional, false)).success).toBe(true);
    // OpenAI refuses an absent additionalProperties under strict; molmesh reads it as false.
    expect(chatBody.safeParse(tool({ ...optional, required: ["a", "b"] }, true)).success).toBe(true);
    const nested = {
      type: "object",
      properties: { inner: { ...optional, additionalProperties: false } },
      required: ["inner"],
      additionalProperties: false,
    };
    expect(chatBody.safeParse(tool(nested, true)).error?.issues[0]?.message).toContain(
      "In context=('properties', 'inner'), 'required'",
    );
    expect(chatBody.safeParse(tool({ ...optional, required: ["a", "zz"] }, false)).success).toBe(false);
  });

  it("a Responses input ending in tool results is a turn of those results; its calls are known", () => {
    const body = responseBody.parse({
      input: [
        { role: "user", content: "weather?" },
        { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city": "Oslo"}' },
        { type: "function_call_output", call_id: "call_a", output: "sunny" },
        { type: "function_call_output", call_id: "call_old", output: "42" },
      ],
      previous_response_id: "resp_turn_x",
    });
    const input = readResponseInput(body.input);
    expect(input.context).toEqual([
      { role: "user", text: "weather?" },
      {
        role: "assistant",
        text: renderToolCallText([CALLS[0] as (typeof CALLS)[0]]),
        // Kept for the items list, which shows it as OpenAI's `function_call` item.
        toolCall: { id: "call_a", name: "get_weather", arguments: '{"city": "Oslo"}' },
      },
    ]);
    expect(input.text).toBe("tool result (get_weather, call_a): sunny\ntool result (call_old): 42");
    expect(input.toolResults).toEqual([
      { callId: "call_a", output: "sunny" },
      { callId: "call_old", output: "42" },
    ]);
    expect(input.outsideCallIds).toEqual([{ callId: "call_old", index: 3 }]);
  });

  it.each([
    [
      {
        tools: [
          {
            type: "function",
            function: { name: "f", parameters: { type: "object", properties: {}, not: {} } },
          },
        ],
      },
      "tools[0].function.parameters",
    ],
    [
      {
        tools: [
          { type: "function", function: { name: "f" } },
          { type: "function", function: { name: "f" } },
        ],
      },
      "tools[1].function.name",
    ],
    [{ tool_choice: "required" }, "tool_choice"],
    [
      {
        response_format: {
          type: "json_schema",
          json_schema: { name: "o", schema: { type: "array", items: {} } },
        },
      },
      "response_format.json_schema.schema",
    ],
  ])("chat %j → 400 at %s", (extra, param) => {
    const result = chatBody.safeParse({ model: "mol", messages: [{ role: "user", content: "x" }], ...extra });
    expect(result.success).toBe(false);
    const path = result.error?.issues[0]?.path ?? [];
    expect(
      path
        .map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))
        .join("")
        .replace(/^\./, "")
        .replaceAll(".[", "["),
    ).toBe(param);
  });
});

describe("a stored call turn replayed", () => {
  it("streams the same call items as the live stream's end state", async () => {
    const parts: TurnStreamPart[] = [];
    for await (const part of replayTurnParts(called)) parts.push(part);
    expect(parts.filter((p) => p.type === "tool-call-delta")).toEqual(
      CALLS.map((call, index) => ({
        type: "tool-call-delta",
        index,
        id: call.id,
        name: call.name,
        argumentsDelta: call.arguments,
      })),
    );
    const client = createClientFor(createResponsesEventStream(makeSource(parts).iterable));
    const events = await collect(await client.responses.create({ model: "mol", input: "hi", stream: true }));
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.output).toEqual(formatResponseObject(called).output);
  });
});

describe("a call cut off by the token budget", () => {
  it("ends its streamed item incomplete, with the arguments that came", async () => {
    const cut = makeTurn({ answerText: "", finishReason: "length", response: { tools: TOOLS } });
    const parts: TurnStreamPart[] = [
      { type: "turn-start", turn: makeStartTurn(cut) },
      { type: "tool-call-delta", index: 0, id: "call_a", name: "get_weather", argumentsDelta: '{"ci' },
      { type: "turn-finish", turn: cut },
    ];
    const client = createClientFor(createResponsesEventStream(makeSource(parts).iterable));
    const events = await collect(await client.responses.create({ model: "mol", input: "hi", stream: true }));
    expect(events.map((event) => event.type).slice(2)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    const last = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
    expect(last.response.output).toEqual([
      {
        type: "function_call",
        id: "fc_01_0",
        call_id: "call_a",
        name: "get_weather",
        arguments: '{"ci',
        status: "incomplete",
      },
    ]);
  });
});
