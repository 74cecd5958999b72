import { z } from "zod";
import {
  CONVERSATION_OPERATIONS,
  type ConversationHandle,
  type ConversationOperation,
  type ConversationOperations,
} from "../core/conversation-core.ts";
import type { StartTurnResult, TurnRefusal } from "../conversation/conversation-rpc.ts";
import type { ConversationObject } from "./conversation-object.ts";

import { ATTACH_PATH, COLO_HEADER, STATELESS_TURN_PATH, TURN_PATH } from "./turn-paths.ts";
import type { HopTraceContext } from "../../../schema/wire/v2/index.ts";
import { toTraceHeaders } from "./turn-traces.ts";

/** How the Worker calls an operation of the object: `call` by name, typed by the core's method. */
type CallOperation = <K extends ConversationOperation>(
  operation: K,
  args: Parameters<ConversationOperations[K]>,
) => Promise<Awaited<ReturnType<ConversationOperations[K]>>>;

/**
 * A conversation object seen as a {@link ConversationHandle}: its operations go over RPC by name (every one the
 * core lists); turns go over `fetch`, whose streamed body carries client cancellation into the object (an
 * RPC-returned stream does not, in workerd).
 */
export function createConversationHandle(
  stub: DurableObjectStub<ConversationObject>,
  /** The HTTP request's id and trace, sent along so the turn's hops carry them to the node. */
  trace: HopTraceContext = {},
  /** The colo the Worker runs in (`request.cf.colo`): the object places its hops through that colo's fleet. */
  colo?: string,
): ConversationHandle {
  // A wrapper, not `stub.call.bind(stub)`: a stub's properties are remote, `bind` included.
  const call = ((operation: ConversationOperation, args: unknown[]) =>
    (stub.call as (operation: ConversationOperation, args: unknown[]) => Promise<unknown>)(
      operation,
      args,
    )) as unknown as CallOperation;
  const headers = { ...toTraceHeaders(trace), ...(colo ? { [COLO_HEADER]: colo } : {}) };
  const startOverFetch = async (path: string, body: unknown): Promise<StartTurnResult> => {
    const response = await stub.fetch(`https://conversation${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...headers },
    });
    // workerd types every body as ReadableStream<any>; a fetch body is bytes.
    if (response.ok && response.body)
      return { ok: true, stream: response.body as ReadableStream<Uint8Array> };
    const refusal = objectErrorSchema.parse(await response.json());
    if (isTurnRefusal(refusal)) return { ok: false, refusal };
    // The object could not decode what this Worker sent: a bug on our side, never the client's.
    throw new Error(`the conversation object rejected the turn request: ${refusal.message}`);
  };
  const operations = Object.fromEntries(
    CONVERSATION_OPERATIONS.map((operation) => [
      operation,
      (...args: Parameters<ConversationOperations[typeof operation]>) => call(operation, args),
    ]),
  ) as unknown as ConversationOperations;
  return {
    ...operations,
    attachTurn: async (turnId) => {
      const response = await stub.fetch(
        `https://conversation${ATTACH_PATH}?turn=${encodeURIComponent(turnId)}`,
        { headers },
      );
      return response.ok && response.body ? response.body : null;
    },
    startTurn: (request) => startOverFetch(TURN_PATH, request),
    startStatelessTurn: (request) => startOverFetch(STATELESS_TURN_PATH, request),
  };
}

/** What the object answers a turn it did not start: a refusal (TurnRefusal), or a 400 with a message. */
const objectErrorSchema = z.looseObject({
  status: z.number(),
  code: z.string().optional(),
  message: z.string(),
});

function isTurnRefusal(body: z.infer<typeof objectErrorSchema>): body is TurnRefusal {
  return (
    (body.status === 400 || body.status === 404 || body.status === 409 || body.status === 422) &&
    typeof body.code === "string"
  );
}
