import { z } from "zod";
import type { ConversationHandle, StartTurnResult, TurnRefusal } from "../conversation/conversation-rpc.ts";
import type { ConversationObject } from "./conversation-object.ts";

import { ATTACH_PATH, STATELESS_TURN_PATH, TURN_PATH } from "./turn-paths.ts";
import type { HopTraceContext } from "../../../schema/wire/v2/index.ts";
import { toTraceHeaders } from "./turn-traces.ts";

/**
 * A conversation object seen as a {@link ConversationHandle}: plain calls go over RPC; turns go over `fetch`, whose
 * streamed body carries client cancellation into the object (an RPC-returned stream does not, in workerd).
 */
export function createConversationHandle(
  stub: DurableObjectStub<ConversationObject>,
  /** The HTTP request's id and trace, sent along so the turn's hops carry them to the node. */
  trace: HopTraceContext = {},
): ConversationHandle {
  const startOverFetch = async (path: string, body: unknown): Promise<StartTurnResult> => {
    const response = await stub.fetch(`https://conversation${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...toTraceHeaders(trace) },
    });
    // workerd types every body as ReadableStream<any>; a fetch body is bytes.
    if (response.ok && response.body)
      return { ok: true, stream: response.body as ReadableStream<Uint8Array> };
    const refusal = objectErrorSchema.parse(await response.json());
    if (isTurnRefusal(refusal)) return { ok: false, refusal };
    // The object could not decode what this Worker sent: a bug on our side, never the client's.
    throw new Error(`the conversation object rejected the turn request: ${refusal.message}`);
  };
  return {
    create: (meta) => stub.create(meta),
    describe: () => stub.describe(),
    listItems: (query) => stub.listItems(query),
    remove: () => stub.remove(),
    createFrom: (meta, seed) => stub.createFrom(meta, seed),
    updateMetadata: (metadata) => stub.updateMetadata(metadata),
    readTurn: (turnId) => stub.readTurn(turnId),
    exportThrough: (turnId) => stub.exportThrough(turnId),
    deleteResponse: (turnId) => stub.deleteResponse(turnId),
    cancelTurn: (turnId) => stub.cancelTurn(turnId),
    readItem: (itemId) => stub.readItem(itemId),
    deleteItem: (itemId) => stub.deleteItem(itemId),
    addItems: (messages) => stub.addItems(messages),
    attachTurn: async (turnId) => {
      const response = await stub.fetch(
        `https://conversation${ATTACH_PATH}?turn=${encodeURIComponent(turnId)}`,
      );
      return response.ok && response.body ? response.body : null;
    },
    startTurn: (request) => startOverFetch(TURN_PATH, request),
    startStatelessTurn: (request) => startOverFetch(STATELESS_TURN_PATH, request),
    startDetachedTurn: (request) => stub.startDetachedTurn(request),
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
