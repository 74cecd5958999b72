import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { formatChatCompletion } from "../../workers/src/api/format/format-chat-completion.ts";
import { formatConversation } from "../../workers/src/api/format/format-conversation.ts";
import { formatItem, formatTurnItems } from "../../workers/src/api/format/format-item.ts";
import { formatItemList } from "../../workers/src/api/format/format-item-list.ts";
import { formatModelList } from "../../workers/src/api/format/format-model-list.ts";
import { formatResponseObject } from "../../workers/src/api/format/format-response-object.ts";
import { makeStartTurn, makeTurn } from "./turn-fixtures.ts";

// Compile-time conformance: tsc fails this file if a formatter drifts from the official client's types.
// `output_text` is computed by the client; `usage` and `error` differ on purpose (null / wire codes).
type ClientResponse = Omit<OpenAI.Responses.Response, "output_text" | "usage" | "error">;

describe("formatResponseObject", () => {
  it("renders a completed turn with critical-path usage and the mol facts", () => {
    const turn = makeTurn();
    const response = formatResponseObject(turn, { metadata: { a: "b" }, temperature: 0.2 });
    const typed: ClientResponse = response;
    expect(typed.id).toBe("resp_turn_01");
    expect(response).toMatchObject({
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      model: "mol",
      conversation: { id: "conv_01" },
      metadata: { a: "b" },
      temperature: 0.2,
      error: null,
      incomplete_details: null,
      output: [
        {
          type: "message",
          id: "msg_a1",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hello, world!", annotations: [] }],
        },
      ],
      mol: turn.mol,
    });
    // route (100 in, 90 cached, 1 out) + answer (200 in, 150 cached, 5 out); the summary hop is not counted.
    expect(response.usage).toStrictEqual({
      input_tokens: 300,
      input_tokens_details: { cached_tokens: 240, cache_write_tokens: 60 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 306,
    });
    const usage: OpenAI.Responses.ResponseUsage | null = response.usage;
    expect(usage).not.toBeNull();
  });

  it("echoes a forced model and counts only the answer hop when there was no route", () => {
    const base = makeTurn();
    const turn = makeTurn({
      mol: { ...base.mol, source: "forced", usage: { answer: base.mol.usage.answer } },
    });
    const response = formatResponseObject(turn);
    expect(response.model).toBe("mol:coding");
    expect(response.usage?.input_tokens).toBe(200);
    expect(formatResponseObject(turn, { model: "mol:x" }).model).toBe("mol:x");
  });

  it("has no output and no usage before any text or hop", () => {
    const start = makeStartTurn();
    const response = formatResponseObject({ ...start, mol: { ...start.mol, usage: {} } });
    expect(response.status).toBe("in_progress");
    expect(response.output).toEqual([]);
    expect(response.usage).toBeNull();
  });

  it("marks a turn cut by the token budget incomplete", () => {
    const response = formatResponseObject(makeTurn({ finishReason: "length" }));
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.output[0]?.status).toBe("incomplete");
  });

  it("reports a failure with its wire code (public message, not the node's) and keeps the partial text", () => {
    const error = { code: "deadline_exceeded" as const, message: "too slow" };
    const response = formatResponseObject(makeTurn({ status: "failed", answerText: "Hel", error }));
    expect(response.status).toBe("failed");
    expect(response.error).toEqual({
      code: "deadline_exceeded",
      message: "the GPU node did not answer before the deadline",
    });
    expect(response.output[0]).toMatchObject({ status: "incomplete", content: [{ text: "Hel" }] });
    expect(formatResponseObject(makeTurn({ status: "cancelled", answerText: "" })).error?.code).toBe(
      "cancelled",
    );
  });
});

describe("formatChatCompletion", () => {
  it("renders OpenAI's chat.completion with cached tokens and mol", () => {
    const turn = makeTurn();
    const completion = formatChatCompletion(turn, { id: "chatcmpl-1", model: "mol", created: 5 });
    const typed: OpenAI.Chat.ChatCompletion = completion;
    expect(typed.choices[0]?.message.content).toBe("Hello, world!");
    expect(completion).toMatchObject({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 5,
      model: "mol",
      system_fingerprint: "h_abc",
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant" } }],
      usage: {
        prompt_tokens: 300,
        completion_tokens: 6,
        total_tokens: 306,
        prompt_tokens_details: { cached_tokens: 240 },
      },
      mol: turn.mol,
    });
    expect(formatChatCompletion(makeTurn({ finishReason: "length" })).choices[0].finish_reason).toBe(
      "length",
    );
    expect(formatChatCompletion(turn).id).toBe("chatcmpl-turn_01");
  });
});

describe("conversation objects", () => {
  it("formats a conversation", () => {
    const conversation = formatConversation({ id: "conv_1", createdAt: 7, metadata: null });
    const typed: OpenAI.Conversations.Conversation = conversation;
    expect(typed).toStrictEqual({ id: "conv_1", object: "conversation", created_at: 7, metadata: {} });
  });

  it("formats user and assistant items, and a turn's pair", () => {
    const user = formatItem({ role: "user", id: "msg_1", text: "hi" });
    expect(user).toStrictEqual({
      id: "msg_1",
      type: "message",
      role: "user",
      status: "completed",
      content: [{ type: "input_text", text: "hi" }],
    });
    const turn = makeTurn();
    const [userItem, assistantItem] = formatTurnItems(turn);
    const typed: OpenAI.Conversations.ConversationItem[] = [userItem, assistantItem];
    expect(typed).toHaveLength(2);
    expect(userItem.content[0].text).toBe("write a function");
    expect(assistantItem).toMatchObject({
      id: "msg_a1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Hello, world!", annotations: [] }],
      mol: turn.mol,
    });
    expect(formatTurnItems(makeStartTurn())[1].status).toBe("in_progress");
  });

  it("lists items with cursors taken from the page unless given", () => {
    const data = [{ id: "a" }, { id: "b" }];
    expect(formatItemList(data, { hasMore: true })).toStrictEqual({
      object: "list",
      data,
      first_id: "a",
      last_id: "b",
      has_more: true,
    });
    expect(formatItemList([], { hasMore: false })).toMatchObject({ first_id: null, last_id: null });
    expect(formatItemList(data, { hasMore: false, lastId: "z" }).last_id).toBe("z");
  });

  it("lists mol and one forced model per specialist", () => {
    const list = formatModelList(["chat", "coding"], { created: 3 });
    const typed: OpenAI.Models.Model[] = list.data;
    expect(typed.map((model) => model.id)).toEqual(["mol", "mol:chat", "mol:coding"]);
    expect(list.object).toBe("list");
    expect(list.data[0]).toStrictEqual({ id: "mol", object: "model", created: 3, owned_by: "molmesh" });
  });
});
