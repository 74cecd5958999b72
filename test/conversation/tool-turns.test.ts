import { describe, expect, it } from "vitest";
import type { GenerateStreamPart } from "../../workers/src/nats/generate-client.ts";
import { WIRE_VERSION, outputConstraintSchema } from "../../schema/wire/v2/index.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { StartTurnRequest, StartTurnResult } from "../../workers/src/conversation/conversation-rpc.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import {
  META,
  MemoryConversationStore,
  TIMINGS,
  answerParts,
  collectParts,
  createScriptedHops,
  createTestDeps,
  usage,
} from "./turn-loop-fixtures.ts";

const TOOLS = [{ name: "get_weather", parameters: { type: "object", properties: {} } }];
const CONSTRAINT = outputConstraintSchema.parse({ type: "tools", tools: TOOLS, choice: "required" });
const CALL = { id: "call_1", name: "get_weather", arguments: "{}" };

/** A node's answer that is one function call, its arguments in two slices. */
// eslint-disable-next-line @typescript-eslint/require-await -- an async stream like the wire's, with nothing to wait for
async function* callParts(): AsyncGenerator<GenerateStreamPart> {
  const base = { version: WIRE_VERSION } as const;
  yield { ...base, seq: 0, type: "start", requestId: "r", nodeId: "n", adapter: "a", revision: "rev1" };
  for (const [i, argumentsDelta] of ["{", "}"].entries())
    yield {
      ...base,
      seq: 1 + i,
      type: "tool-call-delta",
      index: 0,
      id: CALL.id,
      name: CALL.name,
      argumentsDelta,
    };
  yield {
    ...base,
    seq: 3,
    type: "finish",
    finishReason: "tool_calls",
    text: "",
    toolCalls: [CALL],
    usage: usage(50, 3),
    timings: TIMINGS,
  };
}

function streamOf(result: StartTurnResult): ReadableStream<Uint8Array> {
  if (!result.ok) throw new Error(`refused: ${result.refusal.code}`);
  return result.stream;
}

describe("stored turns with tools", () => {
  it("sends the constraint, streams the call, stores it, and appends tools_changed only when tools change", async () => {
    let answers = 0;
    const scripted = createScriptedHops({
      answer: () => (answers++ === 0 ? callParts() : answerParts("Sunny.", usage(60, 2))),
    });
    const store = new MemoryConversationStore(META);
    const { deps, outbox } = createTestDeps(scripted.hops);
    const turns = new ConversationTurns({ ...deps, store, outbox });
    const turn = (request: Partial<StartTurnRequest>) =>
      collectParts(streamOf(turns.startTurn({ conversationId: META.id, text: "weather?", ...request })));

    const parts = await turn({ tools: TOOLS, constraint: CONSTRAINT });
    expect(scripted.calls.answer[0]?.constraint).toEqual(CONSTRAINT);
    expect(parts.filter((p) => p.type === "tool-call-delta")).toEqual([
      { type: "tool-call-delta", index: 0, id: "call_1", name: "get_weather", argumentsDelta: "{" },
      { type: "tool-call-delta", index: 0, id: "call_1", name: "get_weather", argumentsDelta: "}" },
    ]);
    const finish = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-finish" }>;
    expect(finish.turn).toMatchObject({ finishReason: "tool_calls", toolCalls: [CALL], answerText: "" });
    // The answer's view text is the call as the model writes it.
    expect(store.events.find((e) => e.type === "answer")).toMatchObject({
      text: '<tool_call>{"name": "get_weather", "arguments": {}}',
    });

    const unknown = turns.startTurn({
      conversationId: META.id,
      text: "r",
      outsideCallIds: [{ callId: "call_nope", index: 0 }],
    });
    expect(unknown).toMatchObject({ ok: false, refusal: { status: 400, param: "input[0].call_id" } });
    const stored = store.events.length;

    await turn({ tools: TOOLS, outsideCallIds: [{ callId: "call_1", index: 0 }] });
    await turn({});
    await turns.afterTurns(() => Promise.resolve());
    expect(store.events.length).toBeGreaterThan(stored);
    const changes = store.events.flatMap((e) => (e.type === "tools_changed" ? [e] : []));
    // First turn: tools appear; second: the same tools, nothing; third: no tools, the block says so.
    expect(changes.map((e) => e.tools.length)).toEqual([1, 0]);
    expect(scripted.calls.answer[1]?.prompt).toContain("get_weather");
  });
});
