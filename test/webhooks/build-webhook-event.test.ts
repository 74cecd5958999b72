import { describe, expect, it } from "vitest";
import type { TurnRecord } from "../../workers/src/conversation/turn-record.ts";
import {
  MAX_INLINE_ANSWER_CHARS,
  buildSummaryCreatedEvent,
  buildTurnCompletedEvent,
  buildTurnFailedEvent,
} from "../../workers/src/api/format/build-webhook-event.ts";

function turn(overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    ...{ turnId: "turn_1", conversationId: "conv_1", createdAt: 1, status: "completed" },
    ...{
      userItemId: "msg_u",
      assistantItemId: "msg_a",
      userText: "hi",
      answerText: "hello",
      finishReason: "stop",
    },
    mol: {
      ...{ turnId: "turn_1", harnessHash: "h", label: "chat", adapter: "chat", source: "router", nodes: {} },
      ...{ timings: { routeMs: 3 }, placement: {}, usage: {}, summary: { status: "ready", text: "greeted" } },
    },
    ...overrides,
  };
}
const ctx = { conversationId: "conv_1", metadata: { thread_key: "t1" }, now: Date.UTC(2026, 10, 30) };

describe("webhook events", () => {
  it("gives each (turn, type) one stable message id", async () => {
    const a = await buildTurnCompletedEvent(turn(), ctx);
    const b = await buildTurnCompletedEvent(turn(), { ...ctx, now: ctx.now + 5_000 });
    const c = await buildSummaryCreatedEvent(turn(), ctx);
    expect(a.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(b.id).toBe(a.id);
    expect(c.id).not.toBe(a.id);
  });

  it("carries the route, adapter, answer and metadata in {type, timestamp, data}", async () => {
    const event = JSON.parse((await buildTurnCompletedEvent(turn(), ctx)).body) as Record<string, unknown>;
    expect(event).toMatchObject({
      type: "conversation.turn.completed",
      timestamp: "2026-11-30T00:00:00.000Z",
      data: { conversation_id: "conv_1", answer: "hello", adapter: "chat", route: { label: "chat" } },
    });
    expect(event).toHaveProperty("data.conversation_metadata.thread_key", "t1");
  });

  it("carries the response id the client saw and the metadata it sent, on every event", async () => {
    const withMetadata = turn({ response: { metadata: { order: "42" } } });
    for (const build of [buildTurnCompletedEvent, buildTurnFailedEvent, buildSummaryCreatedEvent]) {
      const data = (JSON.parse((await build(withMetadata, ctx)).body) as { data: Record<string, unknown> })
        .data;
      expect(data).toMatchObject({ response_id: "resp_turn_1", metadata: { order: "42" } });
      const plain = (JSON.parse((await build(turn(), ctx)).body) as { data: Record<string, unknown> }).data;
      expect(plain.metadata).toEqual({});
    }
  });

  it("links rather than inlines a long answer", async () => {
    const long = turn({ answerText: "x".repeat(MAX_INLINE_ANSWER_CHARS + 1) });
    const data = (
      JSON.parse((await buildTurnCompletedEvent(long, ctx)).body) as { data: Record<string, unknown> }
    ).data;
    expect(data).not.toHaveProperty("answer");
    expect(data.answer_url).toBe("/v1/conversations/conv_1/items/msg_a");
  });

  it("reports a failure's code with the public message, never the node's", async () => {
    const failed = turn({
      status: "failed",
      error: { code: "overloaded", message: "node gpu-7 refused on mol.v1.answer.chat" },
    });
    const data = (
      JSON.parse((await buildTurnFailedEvent(failed, ctx)).body) as { data: Record<string, unknown> }
    ).data;
    expect(data.error).toEqual({
      code: "overloaded",
      message: "the GPU nodes are overloaded; retry shortly",
    });
    expect(JSON.stringify(data)).not.toContain("gpu-7");
  });

  it("carries the function calls of a turn that ended in calls, and the tool results a turn's input was", async () => {
    const calls = turn({
      answerText: "",
      finishReason: "tool_calls",
      toolCalls: [
        { id: "call_a", name: "get_weather", arguments: '{"unit":"c"}' },
        { id: "call_b", name: "noop", arguments: "{}" },
      ],
      toolResults: [{ callId: "call_0", output: '{"temp": 21}' }],
    });
    const data = (
      JSON.parse((await buildTurnCompletedEvent(calls, ctx)).body) as { data: Record<string, unknown> }
    ).data;
    expect(data).toMatchObject({ answer: "", finish_reason: "tool_calls" });
    expect(data.tool_calls).toEqual([
      {
        type: "function_call",
        id: "fc_1_0",
        call_id: "call_a",
        name: "get_weather",
        arguments: '{"unit":"c"}',
        status: "completed",
      },
      {
        type: "function_call",
        id: "fc_1_1",
        call_id: "call_b",
        name: "noop",
        arguments: "{}",
        status: "completed",
      },
    ]);
    expect(data.tool_results).toEqual([{ call_id: "call_0", output: '{"temp": 21}' }]);
    // A text answer carries neither.
    const plain = (JSON.parse((await buildTurnCompletedEvent(turn(), ctx)).body) as { data: object }).data;
    expect(plain).not.toHaveProperty("tool_calls");
    expect(plain).not.toHaveProperty("tool_results");
  });
});
