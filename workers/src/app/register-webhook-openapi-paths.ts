import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  createWebhookEndpointBodySchema,
  listDeliveriesQuerySchema,
  rotateWebhookSecretBodySchema,
  updateWebhookEndpointBodySchema,
} from "../api/schemas/webhook-schemas.ts";
import type { AppEnv } from "./app-deps.ts";
import { describeJsonResponse } from "./register-openapi-paths.ts";

const json = describeJsonResponse;
const errors = {
  400: json("Invalid request (OpenAI error envelope)"),
  401: json("Missing or wrong API key"),
  403: json("The API key lacks the `webhooks` scope"),
  404: json("Unknown webhook endpoint or delivery"),
};
const security = [{ bearer: [] }];
const id = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, example: "we_0123" }) });
const messageId = id.extend({
  message_id: z.string().openapi({ param: { name: "message_id", in: "path" }, example: "msg_0123" }),
});
const body = (schema: z.ZodType, required = true) => ({
  body: { content: { "application/json": { schema } }, required },
});

/** The webhook paths of the OpenAPI document (handlers validate bodies themselves, as elsewhere). */
export function registerWebhookOpenApiPaths(app: OpenAPIHono<AppEnv>): void {
  const paths = [
    createRoute({
      method: "post",
      path: "/v1/webhook_endpoints",
      security,
      request: body(createWebhookEndpointBodySchema),
      responses: { 200: json("The endpoint; `secret` (whsec_…) is shown this once"), ...errors },
    }),
    createRoute({
      method: "get",
      path: "/v1/webhook_endpoints",
      security,
      responses: { 200: json("The tenant's endpoints; never a secret"), ...errors },
    }),
    createRoute({
      method: "get",
      path: "/v1/webhook_endpoints/{id}",
      security,
      request: { params: id },
      responses: { 200: json("The endpoint"), ...errors },
    }),
    createRoute({
      method: "patch",
      path: "/v1/webhook_endpoints/{id}",
      security,
      request: { params: id, ...body(updateWebhookEndpointBodySchema) },
      responses: {
        200: json("The endpoint; `status: enabled` re-enables one disabled after a 410"),
        ...errors,
      },
    }),
    createRoute({
      method: "delete",
      path: "/v1/webhook_endpoints/{id}",
      security,
      request: { params: id },
      responses: { 200: json("Deleted; queued deliveries are dropped"), ...errors },
    }),
    createRoute({
      method: "post",
      path: "/v1/webhook_endpoints/{id}/rotate_secret",
      security,
      request: { params: id, ...body(rotateWebhookSecretBodySchema, false) },
      responses: {
        200: json("The new secret, shown this once; both are signed with during the grace"),
        ...errors,
      },
    }),
    createRoute({
      method: "get",
      path: "/v1/webhook_endpoints/{id}/deliveries",
      security,
      request: { params: id, query: listDeliveriesQuerySchema },
      responses: { 200: json("The delivery log, oldest first"), ...errors },
    }),
    createRoute({
      method: "get",
      path: "/v1/webhook_endpoints/{id}/deliveries/{message_id}",
      security,
      request: { params: messageId },
      responses: { 200: json("One delivery with its payload and every attempt"), ...errors },
    }),
    createRoute({
      method: "post",
      path: "/v1/webhook_endpoints/{id}/deliveries/{message_id}/redeliver",
      security,
      request: { params: messageId },
      responses: {
        202: json("Queued again, same webhook-id"),
        ...errors,
        409: json("The endpoint is disabled"),
      },
    }),
    createRoute({
      method: "post",
      path: "/v1/hooks/{id}",
      request: {
        params: id,
        body: { content: { "application/json": { schema: z.unknown() } }, required: true },
      },
      responses: {
        202: json("Verified and accepted; the answer goes out as conversation.turn.completed"),
        200: json("Slack url_verification: the challenge"),
        400: json("Malformed body"),
        401: json("Missing or bad signature, or a timestamp outside the tolerance"),
        404: json("No such endpoint, or it takes no inbound webhooks"),
        409: json("This delivery id was already accepted"),
        413: json("Body over 256 KiB"),
        422: json("No thread key or text at the configured JSON pointers"),
      },
    }),
  ];
  for (const route of paths) app.openAPIRegistry.registerPath(route);
}
