import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../api/errors/api-error.ts";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatContextItem, formatTurnInputItems } from "../../api/format/format-conversation-item.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatResponseObject } from "../../api/format/format-response-object.ts";
import { pageQueryFields } from "../../api/schemas/page-query-fields.ts";
import { pathIdSchema } from "../../api/schemas/path-id.ts";
import { createResponsesEventStream } from "../../api/sse/create-responses-event-stream.ts";
import type { ConversationHandle } from "../../core/conversation-core.ts";
import type { StoredTurn } from "../../conversation/conversation-rpc.ts";
import { buildContextItemId, parseResponseId } from "../../conversation/item-id.ts";
import { MAX_FEEDBACK_COMMENT_CHARS } from "../../db/timeline-event.ts";
import { readPartStream } from "../../lib/create-part-stream.ts";
import type { AppEnv } from "../app-deps.ts";
import { SSE_HEADERS } from "../serve-turn.ts";
import {
  TENANT_SECURITY,
  JSON_BODY_ERRORS,
  errorResponse,
  errorResponses,
  jsonBody,
  jsonOrEventStreamResponse,
  jsonResponse,
} from "../route-contract.ts";

/** `GET /v1/responses/{id}`: `stream=true` replays the events (after `starting_after`), then goes live. */
export const retrieveResponseQuerySchema = z
  .object({
    stream: z.enum(["true", "false"]).optional(),
    starting_after: z.coerce.number().int().min(-1).max(Number.MAX_SAFE_INTEGER).optional(),
    // Accepted as OpenAI's clients send them; they change nothing (no reasoning items, no obfuscation).
    include: z.union([z.string(), z.array(z.string())]).optional(),
    include_obfuscation: z.enum(["true", "false"]).optional(),
  })
  .openapi("RetrieveResponseQuery");

export const inputItemsQuerySchema = z.object({ ...pageQueryFields }).openapi("ListInputItemsQuery");

const responseIdParamsSchema = z.object({ id: pathIdSchema("id", "resp_turn_0123") });

/** `POST /v1/responses/{id}/feedback`: the user's verdict on the answer. */
export const responseFeedbackBodySchema = z
  .strictObject({
    rating: z.enum(["positive", "negative"]).describe("The user's verdict on the answer."),
    comment: z
      .string()
      .max(MAX_FEEDBACK_COMMENT_CHARS)
      .optional()
      .describe("Why, in the user's words; shown in `mol.feedback`."),
  })
  .openapi("ResponseFeedbackRequest");

const security = TENANT_SECURITY;
const notFound = {
  404: errorResponse("Unknown, deleted, `store: false` or another tenant's response"),
};
const errors = { ...errorResponses(400, 401, 403), ...notFound };

const routes = {
  retrieve: createRoute({
    method: "get",
    path: "/v1/responses/{id}",
    security,
    request: { params: responseIdParamsSchema, query: retrieveResponseQuerySchema },
    responses: {
      200: jsonOrEventStreamResponse(
        "The Response; with `stream=true` its events after `starting_after` as server-sent events, then live ones while it runs",
      ),
      ...errors,
    },
  }),
  delete: createRoute({
    method: "delete",
    path: "/v1/responses/{id}",
    security,
    request: { params: responseIdParamsSchema },
    responses: {
      200: jsonResponse("Deleted (a tombstone: the conversation's views keep the turn)"),
      ...errors,
    },
  }),
  cancel: createRoute({
    method: "post",
    path: "/v1/responses/{id}/cancel",
    security,
    request: { params: responseIdParamsSchema },
    responses: {
      200: jsonResponse("The background response, cancelled if it was still running"),
      ...errorResponses(401, 403),
      400: errorResponse("Invalid id, or the response is not a background one"),
      ...notFound,
    },
  }),
  feedback: createRoute({
    method: "post",
    path: "/v1/responses/{id}/feedback",
    security,
    ...jsonBody(responseFeedbackBodySchema, { params: responseIdParamsSchema }),
    responses: {
      200: jsonResponse("The Response, its `mol.feedback` the feedback just given"),
      ...errorResponses(...JSON_BODY_ERRORS, 401, 403, 429),
      ...notFound,
      409: errorResponse("The response is still in progress"),
    },
  }),
  inputItems: createRoute({
    method: "get",
    path: "/v1/responses/{id}/input_items",
    security,
    request: { params: responseIdParamsSchema, query: inputItemsQuerySchema },
    responses: { 200: jsonResponse("The response's input items"), ...errors },
  }),
};

/** The stored response named in the path, or a 404: unknown, another tenant's, deleted, or `store: false`. */
async function requireResponse(
  c: Context<AppEnv>,
): Promise<{ id: string; turnId: string; handle: ConversationHandle; stored: StoredTurn }> {
  const id = c.req.param("id") ?? "";
  const parsed = parseResponseId(id);
  if (!parsed) throw createNotFoundError("response", id);
  const handle = c.var.deps.conversations(c.var.tenantId, parsed.conversationId);
  const stored = await handle.readTurn(parsed.turnId);
  if (!stored || stored.deleted) throw createNotFoundError("response", id);
  return { id, turnId: parsed.turnId, handle, stored };
}

/** Retrieve, delete, cancel, feedback, input items. */
export function registerResponseObjectRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(routes.retrieve, async (c) => {
    const query = c.req.valid("query");
    const { id, turnId, handle, stored } = await requireResponse(c);
    if (query.stream !== "true") return c.json(formatResponseObject(stored.turn), 200);
    const stream = await handle.attachTurn(turnId);
    if (!stream) throw createNotFoundError("response", id);
    const startingAfter = query.starting_after;
    return new Response(
      createResponsesEventStream(readPartStream(stream), {
        keepAliveMs: 15_000,
        ...(startingAfter === undefined ? {} : { startingAfter }),
      }),
      { headers: SSE_HEADERS },
    );
  });

  app.openapi(routes.delete, async (c) => {
    const { id, turnId, handle } = await requireResponse(c);
    if (!(await handle.deleteResponse(turnId))) throw createNotFoundError("response", id);
    return c.json({ id, object: "response.deleted", deleted: true }, 200);
  });

  app.openapi(routes.cancel, async (c) => {
    const { id, turnId, handle, stored } = await requireResponse(c);
    if (stored.turn.response?.background !== true) {
      throw new ApiError({
        status: 400,
        type: "invalid_request_error",
        code: "invalid_value",
        param: null,
        message: "Only background responses can be cancelled.",
      });
    }
    const turn = await handle.cancelTurn(turnId);
    if (!turn) throw createNotFoundError("response", id);
    return c.json(formatResponseObject(turn), 200);
  });

  app.openapi(routes.feedback, async (c) => {
    const body = c.req.valid("json");
    const { id, turnId, handle } = await requireResponse(c);
    const feedback = {
      rating: body.rating,
      ...(body.comment === undefined ? {} : { comment: body.comment }),
    };
    const result = await handle.recordFeedback(turnId, feedback);
    if (!result.ok && result.error === "in_progress") {
      throw new ApiError({
        status: 409,
        type: "invalid_request_error",
        code: "response_in_progress",
        param: null,
        message: "Feedback is taken once the response has finished.",
      });
    }
    if (!result.ok) throw createNotFoundError("response", id);
    return c.json(formatResponseObject(result.turn), 200);
  });

  app.openapi(routes.inputItems, async (c) => {
    const query = c.req.valid("query");
    const { stored } = await requireResponse(c);
    const { turn } = stored;
    // The earlier messages the request carried (conversation items of their own), then its user message.
    const items = [
      ...stored.context.map((m, i) => formatContextItem(buildContextItemId(turn.turnId, i), m)),
      ...formatTurnInputItems(turn),
    ];
    const ordered = query.order === "asc" ? items : items.reverse();
    const page = ordered.slice(0, query.limit);
    return c.json(formatItemList(page, { hasMore: ordered.length > page.length }), 200);
  });
}
