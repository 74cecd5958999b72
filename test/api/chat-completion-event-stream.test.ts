import { APIError } from "openai";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { EngineFailureError } from "../../schema/wire/v2/index.ts";
import {
  createChatCompletionEventStream,
  replayChatCompletionEventStream,
} from "../../workers/src/api/sse/create-chat-completion-event-stream.ts";
import { collect, createClientFor, readMol } from "./sse-client.ts";
import { makeParts, makeSource, makeTurn, readAll } from "./turn-fixtures.ts";

const ids = { id: "chatcmpl-1", model: "mol", created: 1_700_000_001 };
const request = { model: "mol", messages: [{ role: "user" as const, content: "hi" }] };

async function streamChunks(
  stream: ReadableStream<Uint8Array>,
  includeUsage: boolean,
): Promise<OpenAI.Chat.ChatCompletionChunk[]> {
  const client = createClientFor(stream);
  const options = { ...request, stream: true as const, stream_options: { include_usage: includeUsage } };
  return collect(await client.chat.completions.create(options));
}

describe("createChatCompletionEventStream, read by the official client", { timeout: 5000 }, () => {
  it("streams role, content, finish reason, then usage with cached tokens", async () => {
    const { iterable, state } = makeSource(makeParts(["Hello", ", ", "world!"]));
    const chunks = await streamChunks(
      createChatCompletionEventStream(iterable, { ...ids, includeUsage: true }),
      true,
    );

    expect(chunks.every((chunk) => chunk.id === ids.id && chunk.created === ids.created)).toBe(true);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the client types `object` as the literal; what was on the wire is what this checks
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.model === "mol")).toBe(
      true,
    );
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe("Hello, world!");
    const finishes = chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null);
    expect(finishes.filter((reason) => reason !== null)).toEqual(["stop"]);
    expect(finishes.at(-2)).toBe("stop");

    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toEqual({
      prompt_tokens: 300,
      completion_tokens: 6,
      total_tokens: 306,
      prompt_tokens_details: { cached_tokens: 240 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(readMol(chunks[0] ?? {})).toMatchObject({ label: "coding" });
    expect(readMol(usageChunk ?? {})).toEqual(makeTurn().mol);
    // The client marks the field deprecated; the edge still sends it, as OpenAI does.
    expect(chunks[0]).toHaveProperty("system_fingerprint", "h_abc");
    expect(state.returned).toBe(1);
  });

  it("leaves usage out unless asked, and ends with [DONE]", async () => {
    const stream = createChatCompletionEventStream(makeSource(makeParts(["a"])).iterable, ids);
    const text = await readAll(stream);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(text).not.toContain('"usage":null');
    expect(text).not.toContain('"choices":[]');
    expect(text).not.toContain("event:");

    const chunks = await streamChunks(
      createChatCompletionEventStream(makeSource(makeParts(["a"])).iterable, ids),
      false,
    );
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
  });

  it("feeds chat.completions.stream() to a final completion", async () => {
    const turn = makeTurn({ answerText: "Hi there", finishReason: "length" });
    const source = makeSource(makeParts(["Hi", " there"], turn));
    const client = createClientFor(
      createChatCompletionEventStream(source.iterable, { ...ids, includeUsage: true }),
    );
    const runner = client.chat.completions.stream({ ...request, stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe("Hi there");
    expect(final.choices[0]?.finish_reason).toBe("length");
    expect(final.usage?.prompt_tokens_details?.cached_tokens).toBe(240);
  });

  it("turns a turn error into a mid-stream error the client throws", async () => {
    const failed = makeTurn({ status: "failed", answerText: "a" });
    const error = { code: "overloaded" as const, message: "node n1 full" };
    const parts = [...makeParts(["a"]).slice(0, 2), { type: "turn-error" as const, turn: failed, error }];
    const stream = createChatCompletionEventStream(makeSource(parts).iterable, ids);
    const client = createClientFor(stream);
    const seen: string[] = [];
    const consume = async () => {
      for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
        seen.push(chunk.choices[0]?.delta.content ?? "");
      }
    };
    const thrown = await consume().catch((caught: unknown) => caught);
    expect(thrown).toBeInstanceOf(APIError);
    expect(thrown).toMatchObject({ code: "overloaded", type: "server_error" });
    expect(seen.join("")).toBe("a");
  });

  it("reports a source that throws or ends early as an error, never as a finished answer", async () => {
    const thrown = makeSource(makeParts(["a"]).slice(0, 2), { throwAfter: new EngineFailureError("gone") });
    const text = await readAll(createChatCompletionEventStream(thrown.iterable, ids));
    expect(text).toMatch(
      /data: \{"error":\{"message":"the GPU node failed while answering",.*"code":"engine_failure"\}\}\n\n$/,
    );

    const early = await readAll(
      createChatCompletionEventStream(makeSource(makeParts(["a"]).slice(0, 2)).iterable, ids),
    );
    expect(early).toContain('"code":"protocol_error"');
    expect(early).not.toContain("[DONE]");
  });

  it("replays a stored turn as the chunks of a one-delta live stream", async () => {
    const turn = makeTurn();
    const options = { ...ids, includeUsage: true };
    const liveStream = createChatCompletionEventStream(
      makeSource(makeParts([turn.answerText], turn)).iterable,
      options,
    );
    const live = await streamChunks(liveStream, true);
    const replayed = await streamChunks(replayChatCompletionEventStream(turn, options), true);
    // Only the first chunk's mol differs: a replay knows the final one (every hop's usage) from the start.
    expect(replayed.slice(1)).toEqual(live.slice(1));
    expect({ ...replayed[0], mol: null }).toEqual({ ...live[0], mol: null });
  });

  it("a client that breaks out of the loop releases the source", async () => {
    const { iterable, state } = makeSource(makeParts(["a", "b", "c"]), { stallAfter: 2 });
    const client = createClientFor(createChatCompletionEventStream(iterable, ids));
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
      if (chunk.choices[0]?.delta.content === "a") break;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(state.returned).toBe(1);
  });
});
