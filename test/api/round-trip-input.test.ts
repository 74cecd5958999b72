import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatChatCompletion } from "../../workers/src/api/format/format-chat-completion.ts";
import { formatTurnItems } from "../../workers/src/api/format/format-item.ts";
import { formatResponseObject } from "../../workers/src/api/format/format-response-object.ts";
import { createChatCompletionBodySchema } from "../../workers/src/api/schemas/create-chat-completion-body-schema.ts";
import { createResponseBodySchema } from "../../workers/src/api/schemas/create-response-body-schema.ts";
import { createChatCompletionEventStream } from "../../workers/src/api/sse/create-chat-completion-event-stream.ts";
import { replayTurnParts } from "../../workers/src/conversation/replay-turn-parts.ts";
import type { TurnRecord } from "../../workers/src/conversation/turn-record.ts";
import { createClientFor } from "./sse-client.ts";
import { makeTurn } from "./turn-fixtures.ts";

/**
 * What the API emits, fed back where OpenAI accepts it as input, is accepted: the chat completion's message (as
 * returned, and as the official client assembles it from the stream) appended to the next request's `messages`;
 * a response's `output` items, and a conversation's items, in the next response's `input`. The most common client
 * pattern of all, and one a strict schema breaks with each field the API adds to what it returns.
 */

const limits = { maxMessageBytes: 1 << 20 };
const chatBody = createChatCompletionBodySchema(limits);
const responseBody = createResponseBodySchema(limits);

const callArb = fc.record({
  id: fc.stringMatching(/^call_[A-Za-z0-9]{1,24}$/),
  name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,30}$/),
  arguments: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify({ value })),
});

/** A finished turn: a text answer (stopped or cut at length), or one to four function calls. */
const turnArb: fc.Arbitrary<TurnRecord> = fc.oneof(
  fc
    .record({ text: fc.string({ unit: "grapheme", maxLength: 200 }), length: fc.boolean() })
    .map(({ text, length }) =>
      makeTurn({ answerText: text, finishReason: length ? "length" : "stop", toolCalls: undefined }),
    ),
  fc
    .uniqueArray(callArb, { minLength: 1, maxLength: 4, selector: (call) => call.id })
    .map((calls) => makeTurn({ answerText: "", finishReason: "tool_calls", toolCalls: calls })),
);

/** Through JSON, as a client holds it. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

function issuesOf(result: { success: boolean; error?: { issues: unknown[] } }): unknown[] {
  return result.success ? [] : (result.error?.issues ?? []);
}

/** The next chat request: the first user message, the API's assistant message, the calls' results, a new user message. */
function nextChatBody(turn: TurnRecord, message: unknown) {
  return {
    model: "mol",
    messages: [
      { role: "user", content: turn.userText },
      message,
      ...(turn.toolCalls ?? []).map((call) => ({ role: "tool", tool_call_id: call.id, content: "42" })),
      { role: "user", content: "and then?" },
    ],
  };
}

describe("what the API emits is accepted back as input", () => {
  it("chat: the returned message, appended to the next request's messages", () => {
    fc.assert(
      fc.property(turnArb, (turn) => {
        const message = asJson(formatChatCompletion(turn).choices[0].message);
        expect(issuesOf(chatBody.safeParse(nextChatBody(turn, message)))).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it("chat: the message the official client assembles from the stream", async () => {
    await fc.assert(
      fc.asyncProperty(turnArb, async (turn) => {
        const client = createClientFor(
          createChatCompletionEventStream(replayTurnParts(turn), {
            id: "chatcmpl-1",
            model: "mol",
            created: 1,
          }),
        );
        const stream = client.chat.completions.stream({
          model: "mol",
          messages: [{ role: "user", content: turn.userText }],
        });
        const message = asJson(await stream.finalMessage());
        expect(issuesOf(chatBody.safeParse(nextChatBody(turn, message)))).toEqual([]);
      }),
      { numRuns: 50 },
    );
  });

  it("responses: the output items, and the conversation's items, in the next input", () => {
    fc.assert(
      fc.property(turnArb, (turn) => {
        const results = (turn.toolCalls ?? []).map((call) => ({
          type: "function_call_output",
          call_id: call.id,
          output: "42",
        }));
        const output = asJson(formatResponseObject(turn).output) as unknown[];
        const next = { role: "user", content: "and then?" };
        const fromOutput = {
          model: "mol",
          input: [{ role: "user", content: turn.userText }, ...output, ...results, next],
        };
        expect(issuesOf(responseBody.safeParse(fromOutput))).toEqual([]);
        const items = asJson(formatTurnItems(turn)) as unknown[];
        const fromItems = { model: "mol", input: [...items, next] };
        expect(issuesOf(responseBody.safeParse(fromItems))).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it("still refuses what the API never emits on a message", () => {
    const turn = makeTurn();
    const message = { ...(asJson(formatChatCompletion(turn).choices[0].message) as object), surprise: 1 };
    expect(issuesOf(chatBody.safeParse(nextChatBody(turn, message)))).not.toEqual([]);
  });
});
