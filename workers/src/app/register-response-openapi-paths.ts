import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  conversationIdParamsSchema,
  createItemsBodySchema,
  updateConversationBodySchema,
} from "../api/schemas/conversation-schemas.ts";
import { DEFAULT_HARNESS } from "../../../schema/harness/default-harness.ts";
import { readMaxUserMessageBytes } from "../../../schema/harness/measure-view-room.ts";
import type { AppEnv } from "./app-deps.ts";
import { describeJsonResponse } from "./register-openapi-paths.ts";
import { inputItemsQuerySchema, retrieveResponseQuerySchema } from "./routes/response-object-routes.ts";

const json = describeJsonResponse;
const limits = { maxMessageBytes: readMaxUserMessageBytes(DEFAULT_HARNESS) };
const errors = {
  400: json("Invalid request (OpenAI error envelope)"),
  401: json("Missing or wrong API key"),
  403: json("The API key lacks this route's scope"),
  404: json("Unknown, deleted or another tenant's response, conversation or item"),
};
const security = [{ bearer: [] }];
const responseId = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "resp_turn_0123" }),
});
const itemParams = conversationIdParamsSchema.extend({
  item_id: z.string().openapi({ param: { name: "item_id", in: "path" }, example: "msg_0123a" }),
});

/** Stored responses (retrieve, stream resume, delete, cancel, input items) and conversation updates and items. */
export function registerResponseOpenApiPaths(app: OpenAPIHono<AppEnv>): void {
  const paths = [
    createRoute({
      method: "get",
      path: "/v1/responses/{id}",
      security,
      request: { params: responseId, query: retrieveResponseQuerySchema },
      responses: {
        200: json(
          "The Response; with `stream=true` its SSE events after `starting_after`, then live ones while it runs",
        ),
        ...errors,
      },
    }),
    createRoute({
      method: "delete",
      path: "/v1/responses/{id}",
      security,
      request: { params: responseId },
      responses: { 200: json("Deleted (a tombstone: the conversation's views keep the turn)"), ...errors },
    }),
    createRoute({
      method: "post",
      path: "/v1/responses/{id}/cancel",
      security,
      request: { params: responseId },
      responses: { 200: json("The background response, cancelled if it was still running"), ...errors },
    }),
    createRoute({
      method: "get",
      path: "/v1/responses/{id}/input_items",
      security,
      request: { params: responseId, query: inputItemsQuerySchema },
      responses: { 200: json("The response's input items"), ...errors },
    }),
    createRoute({
      method: "post",
      path: "/v1/conversations/{id}",
      security,
      request: {
        params: conversationIdParamsSchema,
        body: { content: { "application/json": { schema: updateConversationBodySchema } }, required: true },
      },
      responses: { 200: json("The conversation with its new metadata"), ...errors },
    }),
    createRoute({
      method: "post",
      path: "/v1/conversations/{id}/items",
      security,
      request: {
        params: conversationIdParamsSchema,
        body: {
          content: { "application/json": { schema: createItemsBodySchema(limits) } },
          required: true,
        },
      },
      responses: { 200: json("The added items; they open the next turn's views"), ...errors },
    }),
    createRoute({
      method: "get",
      path: "/v1/conversations/{id}/items/{item_id}",
      security,
      request: { params: itemParams },
      responses: { 200: json("The item (a webhook's `answer_url`)"), ...errors },
    }),
    createRoute({
      method: "delete",
      path: "/v1/conversations/{id}/items/{item_id}",
      security,
      request: { params: itemParams },
      responses: { 200: json("The conversation; the item is tombstoned"), ...errors },
    }),
  ];
  for (const route of paths) app.openAPIRegistry.registerPath(route);
}
