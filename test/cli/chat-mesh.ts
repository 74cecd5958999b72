import { formatConversation } from "../../workers/src/api/format/format-conversation.ts";
import { errorResponse, jsonResponse } from "./mesh-fixtures.ts";
import type { MeshHandler, RecordedRequest } from "./recording-fetch.ts";

export const CONVERSATION_ID = "conv_01";
export const CONVERSATION = formatConversation({ id: CONVERSATION_ID, createdAt: 1_700_000_000 });

/** A mesh with one conversation (`conv_01`) whose turns answer with `turns[i]`, in order. */
export function createChatMesh(
  turns: Array<(request: RecordedRequest) => Response | Promise<Response>>,
): MeshHandler {
  let next = 0;
  return (request) => {
    if (request.method === "POST" && request.path === "/v1/conversations") return jsonResponse(CONVERSATION);
    if (request.method === "GET" && request.path === `/v1/conversations/${CONVERSATION_ID}`) {
      return jsonResponse(CONVERSATION);
    }
    if (request.method === "GET" && request.path.startsWith("/v1/conversations/")) {
      const id = request.path.slice("/v1/conversations/".length);
      return errorResponse({
        status: 404,
        type: "invalid_request_error",
        code: "conversation_not_found",
        message: `No conversation found with id '${id}'.`,
      });
    }
    if (request.method === "POST" && request.path === "/v1/responses") {
      const turn = turns[next++];
      if (turn === undefined) throw new Error("more turns than the test planned");
      return turn(request);
    }
    throw new Error(`unexpected request ${request.method} ${request.path}`);
  };
}
