import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_MESSAGE_BYTES } from "../api/schemas/request-limits.ts";
import {
  conversationIdParamsSchema,
  createConversationBodySchema,
  listItemsQuerySchema,
} from "../api/schemas/conversation-schemas.ts";
import { createChatCompletionBodySchema } from "../api/schemas/create-chat-completion-body-schema.ts";
import { createResponseBodySchema } from "../api/schemas/create-response-body-schema.ts";
import {
  apiKeyIdParamsSchema,
  auditLogQuerySchema,
  createApiKeyBodySchema,
  createTenantBodySchema,
  rotateApiKeyBodySchema,
  tenantLimitsBodySchema,
  tenantIdParamsSchema,
} from "../api/schemas/tenancy-schemas.ts";
import type { AppEnv } from "./app-deps.ts";

const limits = { maxMessageBytes: MAX_MESSAGE_BYTES };
const json = describeJsonResponse;
const errors = {
  400: json("Invalid request (OpenAI error envelope)"),
  401: json("Missing or wrong API key"),
  404: json("Unknown conversation or model"),
};
const body = (schema: z.ZodType) => ({
  body: { content: { "application/json": { schema } }, required: true },
});
const security = [{ bearer: [] }];
/** The key is valid but lacks the route's scope (`conversations`, `responses`, `chat`, `admin`). */
const scoped = { 403: json("The API key lacks this route's scope") };
const adminSecurity = [{ adminToken: [] }];
const adminErrors = {
  400: json("Invalid request (OpenAI error envelope)"),
  401: json("Missing or wrong admin token"),
  403: json("A tenant API key was sent, or the admin API is disabled (no MOL_ADMIN_TOKEN)"),
  404: json("Unknown tenant or key"),
};

/**
 * The OpenAPI document (`GET /openapi.json`). Handlers validate bodies themselves (size, UTF-8 and JSON errors get
 * their own envelopes), so paths are registered for the document only, from the same zod schemas.
 */
export function registerOpenApiPaths(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The operator's MOL_ADMIN_TOKEN; tenant API keys are refused.",
  });
  const paths = [
    createRoute({
      method: "get",
      path: "/livez",
      responses: { 200: json("The edge runs") },
    }),
    ...["/readyz", "/healthz"].map((path) =>
      createRoute({
        method: "get",
        path,
        description:
          "Public: only `status`. With the admin token as bearer: NATS, live nodes and their load.",
        responses: { 200: json("NATS reachable and a GPU node live"), 503: json("Not serving") },
      }),
    ),
    createRoute({
      method: "get",
      path: "/v1/models",
      security,
      responses: { 200: json("mol and mol:<label> models"), ...errors },
    }),
    createRoute({
      method: "post",
      path: "/v1/conversations",
      security,
      request: body(createConversationBodySchema),
      responses: { 200: json("The conversation"), ...errors, ...scoped },
    }),
    createRoute({
      method: "get",
      path: "/v1/conversations/{id}",
      security,
      request: { params: conversationIdParamsSchema },
      responses: { 200: json("The conversation"), ...errors, ...scoped },
    }),
    createRoute({
      method: "delete",
      path: "/v1/conversations/{id}",
      security,
      request: { params: conversationIdParamsSchema },
      responses: { 200: json("Deleted"), ...errors, ...scoped },
    }),
    createRoute({
      method: "get",
      path: "/v1/conversations/{id}/items",
      security,
      request: { params: conversationIdParamsSchema, query: listItemsQuerySchema },
      responses: { 200: json("A page of items; assistant items carry `mol`"), ...errors, ...scoped },
    }),
    createRoute({
      method: "post",
      path: "/v1/responses",
      security,
      request: body(createResponseBodySchema(limits)),
      responses: {
        200: json(
          "A Response (JSON) or typed SSE events with `stream: true`; `mol` holds the turn's MoL facts",
        ),
        ...errors,
        ...scoped,
        409: json("Idempotency-Key in flight"),
        422: json("Idempotency-Key reused with another body"),
        503: json("No GPU node available"),
      },
    }),
    createRoute({
      method: "post",
      path: "/v1/chat/completions",
      security,
      request: body(createChatCompletionBodySchema(limits)),
      responses: {
        200: json("A chat completion, or chunks with `stream: true`"),
        ...errors,
        ...scoped,
        503: json("No GPU node available"),
      },
    }),
    createRoute({
      method: "get",
      path: "/v1/audit_log",
      security,
      request: { query: auditLogQuerySchema },
      responses: {
        200: json("A page of the key's own tenant's audit entries (needs the `admin` scope)"),
        ...errors,
        ...scoped,
      },
    }),
    createRoute({
      method: "post",
      path: "/v1/admin/tenants",
      security: adminSecurity,
      request: body(createTenantBodySchema),
      responses: { 200: json("The tenant"), ...adminErrors },
    }),
    createRoute({
      method: "get",
      path: "/v1/admin/tenants",
      security: adminSecurity,
      request: { query: listItemsQuerySchema },
      responses: { 200: json("A page of tenants, newest first"), ...adminErrors },
    }),
    createRoute({
      method: "get",
      path: "/v1/admin/tenants/{id}",
      security: adminSecurity,
      request: { params: tenantIdParamsSchema },
      responses: { 200: json("The tenant"), ...adminErrors },
    }),
    createRoute({
      method: "get",
      path: "/v1/admin/tenants/{id}/limits",
      security: adminSecurity,
      request: { params: tenantIdParamsSchema },
      responses: { 200: json("The tenant's limits in force (defaults with its overrides)"), ...adminErrors },
    }),
    createRoute({
      method: "put",
      path: "/v1/admin/tenants/{id}/limits",
      security: adminSecurity,
      request: { params: tenantIdParamsSchema, ...body(tenantLimitsBodySchema) },
      responses: { 200: json("The tenant's limits in force; audited"), ...adminErrors },
    }),
    createRoute({
      method: "post",
      path: "/v1/admin/tenants/{id}/keys",
      security: adminSecurity,
      request: { params: tenantIdParamsSchema, ...body(createApiKeyBodySchema) },
      responses: { 200: json("The key; `key` holds the secret, shown this once"), ...adminErrors },
    }),
    createRoute({
      method: "get",
      path: "/v1/admin/tenants/{id}/keys",
      security: adminSecurity,
      request: { params: tenantIdParamsSchema },
      responses: { 200: json("The tenant's keys, revoked ones included; never a secret"), ...adminErrors },
    }),
    createRoute({
      method: "post",
      path: "/v1/admin/tenants/{id}/keys/{key_id}/rotate",
      security: adminSecurity,
      request: {
        params: apiKeyIdParamsSchema,
        body: { content: { "application/json": { schema: rotateApiKeyBodySchema } }, required: false },
      },
      responses: {
        200: json("The successor key (secret shown this once); the old one is refused after `grace_seconds`"),
        ...adminErrors,
        409: json("The key is revoked or already rotated"),
      },
    }),
    createRoute({
      method: "delete",
      path: "/v1/admin/tenants/{id}/keys/{key_id}",
      security: adminSecurity,
      request: { params: apiKeyIdParamsSchema },
      responses: { 200: json("The key, revoked now"), ...adminErrors },
    }),
  ];
  for (const route of paths) app.openAPIRegistry.registerPath(route);
}

/** An OpenAPI response described in words: the handlers' JSON bodies are documented by example, not by schema. */
export function describeJsonResponse(description: string) {
  return { description, content: { "application/json": { schema: z.looseObject({}) } } };
}
