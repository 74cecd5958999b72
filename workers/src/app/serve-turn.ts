import { ApiError } from "../api/errors/api-error.ts";
import {
  createIdempotencyInFlightError,
  createIdempotencyMismatchError,
  createNotFoundError,
} from "../api/errors/request-errors.ts";
import { describeEarlyEnd, describeTurnError } from "../api/sse/describe-stream-failure.ts";
import type { StartTurnResult } from "../conversation/conversation-rpc.ts";
import type { TurnRecord, TurnStreamPart } from "../conversation/turn-record.ts";
import { readPartStream } from "../lib/create-part-stream.ts";
import { OBJECT_STAGE_PREFIX, type StageClock } from "../lib/stage-timings.ts";

/**
 * A refused turn (unknown conversation, previous response or item; idempotency conflict) as the error the client
 * gets. `previousResponseId` names the response the request chained from.
 */
export function toRefusalError(
  result: Extract<StartTurnResult, { ok: false }>,
  conversationId: string,
  previousResponseId?: string,
): ApiError {
  const { refusal } = result;
  switch (refusal.status) {
    case 400:
      return new ApiError({
        status: 400,
        type: "invalid_request_error",
        code: "invalid_value",
        param: refusal.param ?? null,
        message: refusal.message,
      });
    case 404:
      if (refusal.code === "item_not_found")
        return new ApiError({
          status: 404,
          type: "invalid_request_error",
          code: "item_not_found",
          param: "input",
          message: refusal.message,
        });
      // A chained request names no conversation: a missing one is the previous response's (another tenant's id).
      if (refusal.code === "previous_response_not_found" || previousResponseId !== undefined)
        return createNotFoundError("response", previousResponseId ?? "", "previous_response_id");
      return createNotFoundError("conversation", conversationId, "conversation");
    case 409:
      return createIdempotencyInFlightError();
    case 422:
      return createIdempotencyMismatchError();
  }
}

/**
 * Waits for the turn's first part: a turn that fails before any output (no GPU node, say) is answered with an
 * error status instead of a 200 stream that carries only an error.
 */
export async function openTurnStream(
  stream: ReadableStream<Uint8Array>,
): Promise<AsyncIterable<TurnStreamPart>> {
  const parts = readPartStream<TurnStreamPart>(stream);
  const first = await parts.next();
  if (first.done) throw describeEarlyEnd();
  if (first.value.type === "turn-error") {
    await parts.return();
    throw describeTurnError(first.value.error);
  }
  const head = first.value;
  return {
    async *[Symbol.asyncIterator]() {
      yield head;
      yield* parts;
    },
  };
}

/**
 * Reads a whole turn (non-streaming requests); throws the turn's error as an ApiError. The object's stage
 * durations, when it sent them, go to `stages` (as `object.<stage>`).
 */
export async function collectTurn(
  parts: AsyncIterable<TurnStreamPart>,
  stages?: StageClock,
): Promise<TurnRecord> {
  for await (const part of parts) {
    if (part.type === "turn-finish") {
      for (const [stage, ms] of Object.entries(part.stages ?? {}))
        stages?.add(`${OBJECT_STAGE_PREFIX}${stage}`, ms);
      return part.turn;
    }
    if (part.type === "turn-error") throw describeTurnError(part.error);
  }
  throw describeEarlyEnd();
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
} as const;
