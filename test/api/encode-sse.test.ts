import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeSseComment, encodeSseEvent } from "../../workers/src/api/sse/encode-sse.ts";
import { createChatCompletionEventStream } from "../../workers/src/api/sse/create-chat-completion-event-stream.ts";
import { createResponsesEventStream } from "../../workers/src/api/sse/create-responses-event-stream.ts";
import { collect, createClientFor } from "./sse-client.ts";
import { makeParts, makeSource } from "./turn-fixtures.ts";

describe("encodeSseEvent", () => {
  it("writes one data line per line of data, so a newline cannot end the event early", () => {
    expect(encodeSseEvent('{"a":1}', "x")).toBe('event: x\ndata: {"a":1}\n\n');
    expect(encodeSseEvent("a\nb\r\nc")).toBe("data: a\ndata: b\ndata: c\n\n");
    expect(encodeSseComment("keep\nalive")).toBe(": keep alive\n\n");
  });
});

describe("any text survives both streams through the official client", { timeout: 30_000 }, () => {
  const pieces = fc.array(fc.string({ unit: "grapheme", maxLength: 12 }), { minLength: 1, maxLength: 8 });

  it("responses", async () => {
    await fc.assert(
      fc.asyncProperty(pieces, async (deltas) => {
        const stream = createResponsesEventStream(makeSource(makeParts(deltas)).iterable);
        const client = createClientFor(stream);
        const events = await collect(
          await client.responses.create({ model: "mol", input: "hi", stream: true }),
        );
        const text = events.flatMap((event) =>
          event.type === "response.output_text.delta" ? [event.delta] : [],
        );
        expect(text.join("")).toBe(deltas.join(""));
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
        const last = events.at(-1);
        expect(last?.type === "response.completed" && last.response.output[0]).toMatchObject({
          content: [{ text: deltas.join("") }],
        });
      }),
      { numRuns: 30 },
    );
  });

  it("chat", async () => {
    await fc.assert(
      fc.asyncProperty(pieces, async (deltas) => {
        const options = { id: "c", model: "mol", created: 1 };
        const client = createClientFor(
          createChatCompletionEventStream(makeSource(makeParts(deltas)).iterable, options),
        );
        const chunks = await collect(
          await client.chat.completions.create({
            model: "mol",
            messages: [{ role: "user", content: "x" }],
            stream: true,
          }),
        );
        expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(deltas.join(""));
      }),
      { numRuns: 30 },
    );
  });
});
