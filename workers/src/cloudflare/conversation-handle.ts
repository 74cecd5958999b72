import type { ConversationHandle, StartTurnResult, TurnRefusal } from "../conversation/conversation-rpc.ts";
import type { ConversationObject } from "./conversation-object.ts";

import { STATELESS_TURN_PATH, TURN_PATH } from "./turn-paths.ts";

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
    return { ok: false, refusal: (await response.json()) as TurnRefusal };
  };
  return {
    create: (meta) => stub.create(meta),
    describe: () => stub.describe(),
    listItems: (query) => stub.listItems(query),
    remove: () => stub.remove(),
    startTurn: (request) => startOverFetch(TURN_PATH, request),
    startStatelessTurn: (request) => startOverFetch(STATELESS_TURN_PATH, request),
    startDetachedTurn: (request) => stub.startDetachedTurn(request),
  };
}
