import type { WireErrorCode } from "../../schema/wire/v2/index.ts";
import type { TurnRecord, TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import { ApiError, toErrorEnvelope } from "../../workers/src/api/errors/api-error.ts";
import { createResponsesEventStream } from "../../workers/src/api/sse/create-responses-event-stream.ts";
import { makeStartTurn, makeTurn } from "../api/turn-fixtures.ts";

// Bodies come from the edge's own formatters and encoders, so the CLI is tested against the shapes the mesh
// really sends, not against a hand-written imitation that could drift from them.

export const REQUEST_ID = "req_test";

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "x-request-id": REQUEST_ID },
  });
}

export function errorResponse(init: ConstructorParameters<typeof ApiError>[0]): Response {
  const error = new ApiError(init);
  return jsonResponse(toErrorEnvelope(error), error.status);
}

/** Turn `n` of conversation `conv_01`, answering `text`; the default mol is a routed `coding` turn. */
export function makeMeshTurn(n: number, text: string, overrides: Partial<TurnRecord> = {}): TurnRecord {
  const base = makeTurn();
  return makeTurn({
    turnId: `turn_0${n}`,
    userItemId: `msg_u${n}`,
    assistantItemId: `msg_a${n}`,
    answerText: text,
    ...overrides,
    mol: { ...base.mol, turnId: `turn_0${n}`, ...overrides.mol },
  });
}

export interface TurnStreamScript {
  pieces: string[];
  turn: TurnRecord;
  /** After the pieces, stall: a long answer that only the client's going away ends. */
  stall?: boolean;
  /** End with a turn-error part: the edge sends `response.failed`. */
  error?: { code: WireErrorCode; message: string };
}

async function* streamParts(script: TurnStreamScript): AsyncGenerator<TurnStreamPart, void, undefined> {
  yield { type: "turn-start", turn: makeStartTurn(script.turn) };
  for (const delta of script.pieces) yield { type: "text-delta", delta };
  if (script.stall === true) await new Promise<never>(() => undefined);
  if (script.error !== undefined) {
    const turn: TurnRecord = { ...script.turn, status: "failed", error: script.error };
    yield { type: "turn-error", turn, error: script.error };
    return;
  }
  yield { type: "turn-finish", turn: script.turn };
}

/** `POST /v1/responses` with `stream: true`, through the edge's own Responses event encoder. */
export function sseResponse(script: TurnStreamScript): Response {
  return new Response(createResponsesEventStream(streamParts(script)), {
    headers: { "content-type": "text/event-stream", "x-request-id": REQUEST_ID },
  });
}

/** The same stream cut before its terminal event, as a dropped connection leaves it. */
export async function cutSseResponse(script: TurnStreamScript): Promise<Response> {
  const text = await new Response(createResponsesEventStream(streamParts(script))).text();
  const frames = text.split("\n\n").filter((frame) => frame !== "");
  const kept = frames.filter((frame) => !frame.startsWith("event: response.completed"));
  return new Response(`${kept.join("\n\n")}\n\n`, { headers: { "content-type": "text/event-stream" } });
}

/** What GET /v1/usage?group_by=day answers: one row per day, the counts and the group's own field. */
export const USAGE_BY_DAY = {
  object: "list",
  data: [
    {
      day: "2026-11-30",
      requests: 3,
      input_tokens: 1200,
      cached_input_tokens: 900,
      output_tokens: 80,
      total_tokens: 1280,
    },
    {
      day: "2026-12-01",
      requests: 1,
      input_tokens: 40,
      cached_input_tokens: 0,
      output_tokens: 8,
      total_tokens: 48,
    },
  ],
};
