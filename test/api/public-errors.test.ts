import { describe, expect, it } from "vitest";
import { NoRespondersError, type WireErrorCode } from "../../schema/wire/v2/index.ts";
import { formatChatCompletion } from "../../workers/src/api/format/format-chat-completion.ts";
import { formatItem, formatTurnItems } from "../../workers/src/api/format/format-item.ts";
import { formatResponseObject } from "../../workers/src/api/format/format-response-object.ts";
import {
  createChatCompletionEventStream,
  replayChatCompletionEventStream,
} from "../../workers/src/api/sse/create-chat-completion-event-stream.ts";
import {
  createResponsesEventStream,
  replayResponsesEventStream,
} from "../../workers/src/api/sse/create-responses-event-stream.ts";
import type { TurnRecord, TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import { makeParts, makeSource, makeTurn, readAll } from "./turn-fixtures.ts";

// What nodes write into their errors and what must stay inside the mesh.
const SUBJECT = "molmesh.v1.hop.answer.coding";
const NODE = "gpu-node-7f3a";
const leaky = (code: WireErrorCode) => ({ code, message: `${code} on ${SUBJECT} (node ${NODE})` });

function expectNothingInside(text: string): void {
  expect(text).not.toContain(SUBJECT);
  expect(text).not.toContain(NODE);
}

function failedTurn(code: WireErrorCode = "no_responders"): TurnRecord {
  return makeTurn({ status: "failed", answerText: "Hel", finishReason: undefined, error: leaky(code) });
}

function failingParts(turn: TurnRecord): TurnStreamPart[] {
  return [...makeParts(["Hel"]).slice(0, 2), { type: "turn-error", turn, error: leaky("no_responders") }];
}

const chatIds = { id: "chatcmpl-1", model: "mol", created: 1_700_000_001 };

describe("a turn's stored error reaches clients only as its public form", () => {
  it("Response object: public code and fixed message, never the node's", () => {
    const response = formatResponseObject(failedTurn());
    expect(response.error).toEqual({ code: "no_responders", message: "no GPU node is available" });
    expectNothingInside(JSON.stringify(response));
    expect(formatResponseObject(failedTurn("engine_failure")).error).toEqual({
      code: "engine_failure",
      message: "the GPU node failed while answering",
    });
  });

  it("Response object: an unknown adapter is a model to the client, as over HTTP", () => {
    expect(formatResponseObject(failedTurn("unknown_adapter")).error?.code).toBe("model_not_found");
  });

  it("Responses stream: response.failed carries the public error, live and replayed", async () => {
    const live = await readAll(createResponsesEventStream(makeSource(failingParts(failedTurn())).iterable));
    expect(live).toContain("event: response.failed");
    expect(live).toContain('"error":{"code":"no_responders","message":"no GPU node is available"}');
    expectNothingInside(live);

    const replayed = await readAll(replayResponsesEventStream(failedTurn()));
    expect(replayed).toContain("event: response.failed");
    expectNothingInside(replayed);
  });

  it("Responses stream: a source that throws a node's error, before or after the turn starts", async () => {
    const thrown = new NoRespondersError(`no GPU node is serving ${SUBJECT} (node ${NODE})`);
    const before = await readAll(createResponsesEventStream(makeSource([], { throwAfter: thrown }).iterable));
    expect(before).toContain('"code":"no_responders"');
    expectNothingInside(before);

    const afterStart = makeSource(makeParts(["a"]).slice(0, 2), { throwAfter: thrown });
    const after = await readAll(createResponsesEventStream(afterStart.iterable));
    expect(after).toContain("event: response.failed");
    expectNothingInside(after);
  });

  it("chat stream: the error chunk carries the public error, live and replayed", async () => {
    const live = await readAll(
      createChatCompletionEventStream(makeSource(failingParts(failedTurn())).iterable, chatIds),
    );
    expect(live).toContain('"message":"no GPU node is available"');
    expectNothingInside(live);

    const replayed = await readAll(replayChatCompletionEventStream(failedTurn(), chatIds));
    expect(replayed).toContain('"code":"no_responders"');
    expectNothingInside(replayed);
  });
});

describe("a route fallback's node message stays inside too", () => {
  const fallback = { ...leaky("no_responders"), to: "default" as const };
  const turn = makeTurn({ mol: { ...makeTurn().mol, source: "fallback", fallback } });
  const publicFallback = { code: "no_responders", message: "no GPU node is available", to: "default" };

  it("keeps the wire code (why another specialist answered) with the public message", () => {
    expect(formatResponseObject(turn).mol.fallback).toEqual(publicFallback);
    expect(formatChatCompletion(turn).mol.fallback).toEqual(publicFallback);
  });

  it("in Responses, chat completions, conversation items and chat chunks", async () => {
    expectNothingInside(JSON.stringify(formatResponseObject(turn)));
    expectNothingInside(JSON.stringify(formatChatCompletion(turn)));
    expectNothingInside(JSON.stringify(formatTurnItems(turn)));
    const item = formatItem({
      role: "assistant",
      id: "msg_a1",
      text: "x",
      status: "completed",
      mol: turn.mol,
    });
    expectNothingInside(JSON.stringify(item));
    const chunks = await readAll(
      createChatCompletionEventStream(makeSource(makeParts(["Hi"], turn)).iterable, {
        ...chatIds,
        includeUsage: true,
      }),
    );
    expect(chunks).toContain('"source":"fallback"');
    expectNothingInside(chunks);
    expectNothingInside(
      await readAll(createResponsesEventStream(makeSource(makeParts(["Hi"], turn)).iterable)),
    );
  });
});
