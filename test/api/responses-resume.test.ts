import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createResponsesEventStream } from "../../workers/src/api/sse/create-responses-event-stream.ts";
import { formatResponseObject } from "../../workers/src/api/format/format-response-object.ts";
import { collect, createClientFor } from "./sse-client.ts";
import { makeParts, makeSource, makeTurn } from "./turn-fixtures.ts";

type Event = OpenAI.Responses.ResponseStreamEvent;

async function streamEvents(stream: ReadableStream<Uint8Array>): Promise<Event[]> {
  const client = createClientFor(stream);
  return collect(await client.responses.create({ model: "mol", input: "hi", stream: true }));
}

describe("stream resume (starting_after)", { timeout: 5000 }, () => {
  it("sends only the events after N, numbered as the first delivery numbered them", async () => {
    const parts = makeParts(["Hello", ", ", "world!"]);
    const all = await streamEvents(createResponsesEventStream(makeSource(parts).iterable));
    const resumed = await streamEvents(
      createResponsesEventStream(makeSource(parts).iterable, { startingAfter: 4 }),
    );
    expect(resumed.map((e) => e.sequence_number)).toEqual(all.slice(5).map((e) => e.sequence_number));
    expect(resumed).toEqual(all.slice(5));
    expect(resumed.at(-1)?.type).toBe("response.completed");
  });

  it("sends nothing when the client already saw every event", async () => {
    const parts = makeParts(["Hi"]);
    const all = await streamEvents(createResponsesEventStream(makeSource(parts).iterable));
    const last = all.at(-1)?.sequence_number ?? 0;
    const resumed = await streamEvents(
      createResponsesEventStream(makeSource(parts).iterable, { startingAfter: last }),
    );
    expect(resumed).toEqual([]);
  });
});

describe("the response object echoes the request", () => {
  it("from the stored echo, with options winning, and no conversation for an implicit one", () => {
    const turn = makeTurn({
      response: {
        instructions: "Be brief.",
        temperature: 0.3,
        topP: 0.9,
        maxOutputTokens: 64,
        toolChoice: "auto",
        background: true,
        previousResponseId: "resp_turn_x",
        inConversation: false,
        metadata: { a: "b" },
      },
    });
    const response = formatResponseObject(turn);
    expect(response).toMatchObject({
      instructions: "Be brief.",
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 64,
      tool_choice: "auto",
      tools: [],
      background: true,
      previous_response_id: "resp_turn_x",
      conversation: null,
      metadata: { a: "b" },
      store: true,
    });
    expect(formatResponseObject(turn, { store: false, status: "queued" })).toMatchObject({
      store: false,
      status: "queued",
    });
    expect(formatResponseObject(makeTurn()).conversation).toEqual({ id: "conv_01" });
  });
});
