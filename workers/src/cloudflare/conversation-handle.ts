import type { ConversationHandle, StartTurnResult, TurnRefusal } from "../conversation/conversation-rpc.ts";
import type { ConversationObject } from "./conversation-object.ts";

import { ATTACH_PATH, STATELESS_TURN_PATH, TURN_PATH } from "./turn-paths.ts";

/**
 * A conversation object seen as a {@link ConversationHandle}: plain calls go over RPC; turns go over `fetch`, whose
 * streamed body carries client cancellation into the object (an RPC-returned stream does not, in workerd).
 */
export function createConversationHandle(stub: DurableObjectStub<ConversationObject>): ConversationHandle {
  const startOverFetch = async (path: string, body: unknown): Promise<StartTurnResult> => {
    const response = await stub.fetch(`https://conversation${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    if (response.ok && response.body) return { ok: true, stream: response.body };
    const refusal = (await response.json()) as TurnRefusal | { status: number; message: string };
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

function isTurnRefusal(body: { status: number }): body is TurnRefusal {
  return body.status === 400 || body.status === 404 || body.status === 409 || body.status === 422;
}
