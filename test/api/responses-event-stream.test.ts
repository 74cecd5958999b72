import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { DeadlineExceededError } from "../../schema/wire/v2/index.ts";
import {
  createResponsesEventStream,
  replayResponsesEventStream,
} from "../../workers/src/api/sse/create-responses-event-stream.ts";
import { collect, createClientFor, readMol } from "./sse-client.ts";
import { makeParts, makeSource, makeStartTurn, makeTurn, readAll } from "./turn-fixtures.ts";

type Event = OpenAI.Responses.ResponseStreamEvent;

async function streamEvents(stream: ReadableStream<Uint8Array>): Promise<Event[]> {
  const client = createClientFor(stream);
  return collect(
    await client.responses.create({ model: "mol", input: "hi", conversation: "conv_01", stream: true }),
  );
}

function expectIncreasingSequence(events: Event[]): void {
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
}

describe("createResponsesEventStream, read by the official client", { timeout: 5000 }, () => {
  it("emits the typed events in order, text deltas, and a completed response with usage and mol", async () => {
    const { iterable, state } = makeSource(makeParts(["Hello", ", ", "world!"]));
    const events = await streamEvents(createResponsesEventStream(iterable, { metadata: { a: "b" } }));

    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expectIncreasingSequence(events);
    const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event] : []));
    expect(deltas.map((event) => event.delta).join("")).toBe("Hello, world!");
    expect(deltas[0]).toMatchObject({ item_id: "msg_a1", output_index: 0, content_index: 0 });

    const created = events[0];
    expect(created?.type === "response.created" && created.response).toMatchObject({
      id: "resp_turn_01",
      status: "in_progress",
      output: [],
      usage: null,
    });
    const completed = events.at(-1);
    if (completed?.type !== "response.completed") throw new Error("no response.completed");
    expect(completed.response).toMatchObject({
      id: "resp_turn_01",
      status: "completed",
      metadata: { a: "b" },
      conversation: { id: "conv_01" },
      usage: {
        input_tokens: 300,
        input_tokens_details: { cached_tokens: 240 },
        output_tokens: 6,
        total_tokens: 306,
      },
      output: [{ type: "message", id: "msg_a1", content: [{ type: "output_text", text: "Hello, world!" }] }],
    });
    expect(readMol(completed.response)).toEqual(makeTurn().mol);
    expect(readMol(created?.type === "response.created" ? created.response : {})).toMatchObject({
      label: "coding",
    });
    expect(state.returned).toBe(1);
  });

  it("does not stall on a part that produces no event (repeated turn-starts)", async () => {
    const [start, ...rest] = makeParts(["a"]);
    if (start === undefined) throw new Error("no parts");
    const events = await streamEvents(
      createResponsesEventStream(makeSource([start, start, start, start, start, ...rest]).iterable),
    );
    expect(events.filter((event) => event.type === "response.created")).toHaveLength(1);
    expect(events.at(-1)?.type).toBe("response.completed");
  });

  it("feeds responses.stream(): snapshots and the final response", async () => {
    const client = createClientFor(createResponsesEventStream(makeSource(makeParts(["Hel", "lo"])).iterable));
    const runner = client.responses.stream({ model: "mol", input: "hi", conversation: "conv_01" });
    const snapshots: string[] = [];
    runner.on("response.output_text.delta", (event) => snapshots.push(event.snapshot));
    const final = await runner.finalResponse();
    expect(snapshots).toEqual(["Hel", "Hello"]);
    expect(final.output_text).toBe("Hello");
    expect(final.status).toBe("completed");
    expect(final.usage?.total_tokens).toBe(306);
    expect(readMol(final)).toMatchObject({ label: "coding", adapter: "coding" });
  });

  it("ends with response.incomplete when the token budget ran out", async () => {
    const turn = makeTurn({ answerText: "Hi", finishReason: "length" });
    const events = await streamEvents(
      createResponsesEventStream(makeSource(makeParts(["Hi"], turn)).iterable),
    );
    const last = events.at(-1);
    expect(last?.type).toBe("response.incomplete");
    expect(last?.type === "response.incomplete" && last.response.incomplete_details).toEqual({
      reason: "max_output_tokens",
    });
  });

  it("ends with response.failed carrying the error and the partial text", async () => {
    const failed = makeTurn({ status: "failed", answerText: "Hel", finishReason: undefined });
    const error = { code: "deadline_exceeded" as const, message: "answer hop timed out" };
    const parts = [...makeParts(["Hel"]).slice(0, 2), { type: "turn-error" as const, turn: failed, error }];
    const events = await streamEvents(createResponsesEventStream(makeSource(parts).iterable));
    expectIncreasingSequence(events);
    const last = events.at(-1);
    if (last?.type !== "response.failed") throw new Error(`got ${last?.type}`);
    expect(last.response.status).toBe("failed");
    expect(last.response.error).toMatchObject({ code: "deadline_exceeded" });
    expect(last.response.output[0]).toMatchObject({ status: "incomplete", content: [{ text: "Hel" }] });
  });

  it("fails a stream whose source ends early or throws", async () => {
    const early = await streamEvents(
      createResponsesEventStream(makeSource(makeParts(["a"]).slice(0, 2)).iterable),
    );
    const last = early.at(-1);
    expect(last?.type === "response.failed" && last.response.error).toMatchObject({ code: "protocol_error" });

    const thrown = makeSource(makeParts(["a"]).slice(0, 1), {
      throwAfter: new DeadlineExceededError("slow"),
    });
    const failed = (await streamEvents(createResponsesEventStream(thrown.iterable))).at(-1);
    expect(failed?.type === "response.failed" && failed.response.error).toMatchObject({
      code: "deadline_exceeded",
    });
  });

  it("sends an error event when the source fails before the turn starts", async () => {
    const source = makeSource([], { throwAfter: new Error("boom") });
    const events = await streamEvents(createResponsesEventStream(source.iterable));
    expect(events).toEqual([
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types its asymmetric matchers as any
      { type: "error", sequence_number: 0, code: "internal_error", message: expect.any(String), param: null },
    ]);
  });

  it("replays a stored turn as the events a one-delta live stream sent", async () => {
    const turn = makeTurn();
    // The opening snapshots of a replay carry the final mol (usage of every hop); everything else is identical.
    const withoutMol = (event: Event) =>
      "response" in event ? { ...event, response: { ...event.response, mol: null } } : event;
    const live = await streamEvents(
      createResponsesEventStream(makeSource(makeParts([turn.answerText], turn)).iterable),
    );
    const replayed = await streamEvents(replayResponsesEventStream(turn));
    expect(replayed.map(withoutMol)).toEqual(live.map(withoutMol));
    expect(replayed.at(-1)).toEqual(live.at(-1));
    expect(() => replayResponsesEventStream(makeStartTurn())).toThrow(RangeError);
  });

  it("writes `event:` and `data:` lines", async () => {
    const text = await readAll(createResponsesEventStream(makeSource(makeParts(["a"])).iterable));
    expect(text).toMatch(
      /^event: response\.created\ndata: \{"type":"response\.created","sequence_number":0,/,
    );
    expect(text.endsWith("\n\n")).toBe(true);
  });
});

describe("cancellation", { timeout: 5000 }, () => {
  it("a client that stops reading releases the source", async () => {
    const { iterable, state } = makeSource(makeParts(["a", "b", "c"]), { stallAfter: 3 });
    const client = createClientFor(createResponsesEventStream(iterable));
    const stream = await client.responses.create({ model: "mol", input: "hi", stream: true });
    for await (const event of stream) if (event.type === "response.output_text.delta") break;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(state.returned).toBe(1);
  });

  it("cancel() while the source is stuck calls onCancel and return() at once", async () => {
    const { iterable, state } = makeSource(makeParts(["a"]), { stallAfter: 1 });
    const reasons: unknown[] = [];
    const stream = createResponsesEventStream(iterable, { onCancel: (reason) => reasons.push(reason) });
    const reader = stream.getReader();
    // turn-start is four events; the fifth read waits on the stuck source.
    for (let frame = 0; frame < 4; frame++) expect((await reader.read()).done).toBe(false);
    const pendingRead = reader.read();
    await reader.cancel("client gone");
    expect(await pendingRead).toEqual({ done: true, value: undefined });
    expect(reasons).toEqual(["client gone"]);
    expect(state.returned).toBe(1);
  });

  it("keeps an idle stream alive with comments the client ignores", async () => {
    const { iterable } = makeSource(makeParts(["a"]), { stallAfter: 0 });
    const reader = createResponsesEventStream(iterable, { keepAliveMs: 5 }).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(": keepalive\n\n");
    await reader.cancel();
  });
});
