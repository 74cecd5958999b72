import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../api/errors/api-error.ts";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatWebhookDelivery } from "../../api/format/format-webhook-delivery.ts";
import { formatWebhookEndpoint } from "../../api/format/format-webhook-endpoint.ts";
import { listItemsQuerySchema } from "../../api/schemas/conversation-schemas.ts";
import { pathIdSchema } from "../../api/schemas/path-id.ts";
import {
  DEFAULT_SECRET_GRACE_SECONDS,
  createWebhookEndpointBodySchema,
  listDeliveriesQuerySchema,
  rotateWebhookSecretBodySchema,
  updateWebhookEndpointBodySchema,
} from "../../api/schemas/webhook-schemas.ts";
import type { AuditAction } from "../../tenancy/tenant-store.ts";
import { checkWebhookUrl } from "../../webhooks/check-webhook-url.ts";
import { generateWebhookSecret } from "../../webhooks/webhook-signatures.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";
import {
  JSON_BODY_ERRORS,
  TENANT_SECURITY,
  errorResponse,
  errorResponses,
  jsonBody,
  jsonResponse,
} from "../route-contract.ts";
import { toInboundConfig } from "./to-inbound-config.ts";

const endpointIdParamsSchema = z.object({ id: pathIdSchema("id", "we_0123") });
const deliveryParamsSchema = endpointIdParamsSchema.extend({
  message_id: pathIdSchema("message_id", "msg_0123"),
});

const security = TENANT_SECURITY;
const scope = { 403: errorResponse("The API key lacks the `webhooks` scope") };
const notFound = { 404: errorResponse("Unknown webhook endpoint of this tenant") };
const read = { ...errorResponses(400, 401), ...scope, ...notFound };
/** Writes are rate-limited on the tenant's writes bucket (admit-turn.ts). */
const write = { ...errorResponses(400, 401, 429), ...scope, ...notFound };
const bodyWrite = { ...write, ...errorResponses(...JSON_BODY_ERRORS) };
const urlRefused =
  "; 400 `invalid_webhook_url` for a URL the SSRF policy refuses (not http(s), or not a public host)";

const routes = {
  create: createRoute({
    method: "post",
    path: "/v1/webhook_endpoints",
    security,
    ...jsonBody(createWebhookEndpointBodySchema),
    description: `Registers an outbound endpoint${urlRefused}.`,
    responses: {
      200: jsonResponse("The endpoint; `secret` (whsec_…) is shown this once"),
      ...errorResponses(...JSON_BODY_ERRORS, 401, 429),
      ...scope,
    },
  }),
  list: createRoute({
    method: "get",
    path: "/v1/webhook_endpoints",
    security,
    request: { query: listItemsQuerySchema },
    responses: {
      200: jsonResponse("The tenant's endpoints; never a secret"),
      ...errorResponses(400, 401),
      ...scope,
      404: errorResponse("`after` names no endpoint of the tenant"),
    },
  }),
  retrieve: createRoute({
    method: "get",
    path: "/v1/webhook_endpoints/{id}",
    security,
    request: { params: endpointIdParamsSchema },
    responses: { 200: jsonResponse("The endpoint"), ...read },
  }),
  update: createRoute({
    method: "patch",
    path: "/v1/webhook_endpoints/{id}",
    security,
    ...jsonBody(updateWebhookEndpointBodySchema, { params: endpointIdParamsSchema }),
    description: `Changes an endpoint; \`status: enabled\` re-enables one disabled after a 410${urlRefused}.`,
    responses: { 200: jsonResponse("The endpoint"), ...bodyWrite },
  }),
  delete: createRoute({
    method: "delete",
    path: "/v1/webhook_endpoints/{id}",
    security,
    request: { params: endpointIdParamsSchema },
    responses: { 200: jsonResponse("Deleted; queued deliveries are dropped"), ...write },
  }),
  rotateSecret: createRoute({
    method: "post",
    path: "/v1/webhook_endpoints/{id}/rotate_secret",
    security,
    ...jsonBody(rotateWebhookSecretBodySchema, { params: endpointIdParamsSchema }, { optional: true }),
    responses: {
      200: jsonResponse("The new secret, shown this once; both are signed with during the grace"),
      ...bodyWrite,
    },
  }),
  listDeliveries: createRoute({
    method: "get",
    path: "/v1/webhook_endpoints/{id}/deliveries",
    security,
    request: { params: endpointIdParamsSchema, query: listDeliveriesQuerySchema },
    responses: { 200: jsonResponse("The delivery log, oldest first"), ...read },
  }),
  retrieveDelivery: createRoute({
    method: "get",
    path: "/v1/webhook_endpoints/{id}/deliveries/{message_id}",
    security,
    request: { params: deliveryParamsSchema },
    responses: {
      200: jsonResponse("One delivery with its payload and every attempt"),
      ...read,
      404: errorResponse("Unknown endpoint or delivery"),
    },
  }),
  redeliver: createRoute({
    method: "post",
    path: "/v1/webhook_endpoints/{id}/deliveries/{message_id}/redeliver",
    security,
    request: { params: deliveryParamsSchema },
    responses: {
      202: jsonResponse("Queued again, same webhook-id"),
      ...write,
      404: errorResponse("Unknown endpoint or delivery"),
      409: errorResponse("The endpoint is disabled"),
    },
  }),
};

function checkUrl(c: Context<AppEnv>, url: string): string {
  const check = checkWebhookUrl(url, c.var.deps.webhookUrlPolicy);
  if (check.ok) return check.url;
  throw new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: "invalid_webhook_url",
    param: "url",
    message: `The webhook URL is not allowed (${check.reason}): only http(s) to a public host.`,
  });
}

function audit(
  c: Context<AppEnv>,
  action: AuditAction,
  target: string,
  details: Record<string, unknown> = {},
) {
  const { principal, deps } = c.var;
  return {
    tenantId: principal.tenantId,
    actor: principal.keyId,
    action,
    target,
    details,
    createdAt: Math.floor(deps.now() / 1000),
  };
}

async function requireEndpoint(c: Context<AppEnv>) {
  const id = c.req.param("id") ?? "";
  const endpoint = await c.var.deps.webhookEndpoints.getById(id);
  // Another tenant's endpoint is indistinguishable from a missing one.
  if (!endpoint || endpoint.tenantId !== c.var.tenantId) throw createNotFoundError("webhook_endpoint", id);
  return endpoint;
}

/** `/v1/webhook_endpoints…`: a tenant's outbound endpoints, their secrets, delivery logs and redelivery. */
export function registerWebhookEndpointRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/webhook_endpoints", requireScope("webhooks"));
  app.use("/v1/webhook_endpoints/*", requireScope("webhooks"));

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const { deps, tenantId } = c.var;
    const url = checkUrl(c, body.url);
    const now = Math.floor(deps.now() / 1000);
    const secret = generateWebhookSecret();
    const inbound = body.inbound ? toInboundConfig(body.inbound) : null;
    const endpoint = {
      id: deps.newId("we"),
      tenantId,
      url,
      description: body.description ?? "",
      events: body.events,
      status: "enabled" as const,
      disabledReason: null,
      secret,
      previousSecret: null,
      previousSecretExpiresAt: null,
      inbound,
      createdAt: now,
      updatedAt: now,
    };
    await deps.webhookEndpoints.create(endpoint, audit(c, "webhook_endpoint.created", endpoint.id, { url }));
    const generatedInbound = body.inbound && !body.inbound.secret ? inbound?.secret : undefined;
    return c.json(
      formatWebhookEndpoint(endpoint, {
        secret,
        ...(generatedInbound ? { inboundSecret: generatedInbound } : {}),
      }),
      200,
    );
  });

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid("query");
    const page = await c.var.deps.webhookEndpoints.list(c.var.tenantId, query);
    if ("error" in page) throw createNotFoundError("webhook_endpoint", query.after ?? "", "after");
    return c.json(
      formatItemList(
        page.data.map((e) => formatWebhookEndpoint(e)),
        { hasMore: page.hasMore },
      ),
      200,
    );
  });

  app.openapi(routes.retrieve, async (c) => c.json(formatWebhookEndpoint(await requireEndpoint(c)), 200));

  app.openapi(routes.update, async (c) => {
    const body = c.req.valid("json");
    const current = await requireEndpoint(c);
    const { deps, tenantId } = c.var;
    const patch = {
      ...(body.url !== undefined ? { url: checkUrl(c, body.url) } : {}),
      ...(body.events !== undefined ? { events: body.events } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.status !== undefined
        ? { status: body.status, disabledReason: body.status === "disabled" ? "manual" : null }
        : {}),
      ...(body.inbound !== undefined ? { inbound: body.inbound ? toInboundConfig(body.inbound) : null } : {}),
      updatedAt: Math.floor(deps.now() / 1000),
    };
    const details = { fields: Object.keys(body) };
    const updated = await deps.webhookEndpoints.update(
      tenantId,
      current.id,
      patch,
      audit(c, "webhook_endpoint.updated", current.id, details),
    );
    if (!updated) throw createNotFoundError("webhook_endpoint", current.id);
    return c.json(formatWebhookEndpoint(updated), 200);
  });

  app.openapi(routes.delete, async (c) => {
    const current = await requireEndpoint(c);
    await c.var.deps.webhookEndpoints.remove(
      c.var.tenantId,
      current.id,
      audit(c, "webhook_endpoint.deleted", current.id),
    );
    return c.json({ id: current.id, object: "webhook_endpoint.deleted", deleted: true }, 200);
  });

  app.openapi(routes.rotateSecret, async (c) => {
    const body = c.req.valid("json");
    const current = await requireEndpoint(c);
    const { deps, tenantId } = c.var;
    const now = Math.floor(deps.now() / 1000);
    const grace = body.grace_seconds ?? DEFAULT_SECRET_GRACE_SECONDS;
    const secret = generateWebhookSecret();
    const rotated = await deps.webhookEndpoints.rotateSecret(
      tenantId,
      current.id,
      { secret, previousSecretExpiresAt: now + grace, updatedAt: now },
      audit(c, "webhook_endpoint.secret_rotated", current.id, { grace_seconds: grace }),
    );
    if (!rotated) throw createNotFoundError("webhook_endpoint", current.id);
    return c.json(formatWebhookEndpoint(rotated, { secret: rotated.secret }), 200);
  });

  app.openapi(routes.listDeliveries, async (c) => {
    const query = c.req.valid("query");
    const endpoint = await requireEndpoint(c);
    const page = await c.var.deps.webhookDeliveries(endpoint.id).listMessages(query);
    return c.json(
      formatItemList(
        page.data.map((m) => formatWebhookDelivery(m)),
        { hasMore: page.hasMore },
      ),
      200,
    );
  });

  app.openapi(routes.retrieveDelivery, async (c) => {
    const endpoint = await requireEndpoint(c);
    const id = c.req.valid("param").message_id;
    const found = await c.var.deps.webhookDeliveries(endpoint.id).getMessage(id);
    if (!found) throw createNotFoundError("webhook_delivery", id);
    return c.json(formatWebhookDelivery(found.message, found.attempts), 200);
  });

  app.openapi(routes.redeliver, async (c) => {
    const endpoint = await requireEndpoint(c);
    if (endpoint.status !== "enabled") {
      throw new ApiError({
        status: 409,
        type: "invalid_request_error",
        code: "webhook_endpoint_disabled",
        message: `The endpoint is disabled (${endpoint.disabledReason ?? "manual"}); enable it before redelivering.`,
      });
    }
    const id = c.req.valid("param").message_id;
    const message = await c.var.deps.webhookDeliveries(endpoint.id).redeliver(id);
    if (!message) throw createNotFoundError("webhook_delivery", id);
    return c.json(formatWebhookDelivery(message), 202);
  });
}
