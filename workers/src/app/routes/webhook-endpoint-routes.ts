import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../api/errors/api-error.ts";
import { createValidationError, createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatWebhookDelivery } from "../../api/format/format-webhook-delivery.ts";
import { formatWebhookEndpoint } from "../../api/format/format-webhook-endpoint.ts";
import { listItemsQuerySchema } from "../../api/schemas/conversation-schemas.ts";
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
import { readJsonBody, readOptionalJsonBody } from "../read-json-body.ts";
import { requireScope } from "../access-guards.ts";
import { toInboundConfig } from "./to-inbound-config.ts";

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

  app.post("/v1/webhook_endpoints", async (c) => {
    const body = await readJsonBody(c, createWebhookEndpointBodySchema);
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
    );
  });

  app.get("/v1/webhook_endpoints", async (c) => {
    const query = listItemsQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const page = await c.var.deps.webhookEndpoints.list(c.var.tenantId, query.data);
    if ("error" in page) throw createNotFoundError("webhook_endpoint", query.data.after ?? "", "after");
    return c.json(
      formatItemList(
        page.data.map((e) => formatWebhookEndpoint(e)),
        { hasMore: page.hasMore },
      ),
    );
  });

  app.get("/v1/webhook_endpoints/:id", async (c) => c.json(formatWebhookEndpoint(await requireEndpoint(c))));

  app.patch("/v1/webhook_endpoints/:id", async (c) => {
    const body = await readJsonBody(c, updateWebhookEndpointBodySchema);
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
    return c.json(formatWebhookEndpoint(updated));
  });

  app.delete("/v1/webhook_endpoints/:id", async (c) => {
    const current = await requireEndpoint(c);
    await c.var.deps.webhookEndpoints.remove(
      c.var.tenantId,
      current.id,
      audit(c, "webhook_endpoint.deleted", current.id),
    );
    return c.json({ id: current.id, object: "webhook_endpoint.deleted", deleted: true });
  });

  app.post("/v1/webhook_endpoints/:id/rotate_secret", async (c) => {
    const body = await readOptionalJsonBody(c, rotateWebhookSecretBodySchema);
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
    return c.json(formatWebhookEndpoint(rotated, { secret: rotated.secret }));
  });

  app.get("/v1/webhook_endpoints/:id/deliveries", async (c) => {
    const query = listDeliveriesQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const endpoint = await requireEndpoint(c);
    const page = await c.var.deps.webhookDeliveries(endpoint.id).listMessages(query.data);
    return c.json(
      formatItemList(
        page.data.map((m) => formatWebhookDelivery(m)),
        { hasMore: page.hasMore },
      ),
    );
  });

  app.get("/v1/webhook_endpoints/:id/deliveries/:message_id", async (c) => {
    const endpoint = await requireEndpoint(c);
    const id = c.req.param("message_id");
    const found = await c.var.deps.webhookDeliveries(endpoint.id).getMessage(id);
    if (!found) throw createNotFoundError("webhook_delivery", id);
    return c.json(formatWebhookDelivery(found.message, found.attempts));
  });

  app.post("/v1/webhook_endpoints/:id/deliveries/:message_id/redeliver", async (c) => {
    const endpoint = await requireEndpoint(c);
    if (endpoint.status !== "enabled") {
      throw new ApiError({
        status: 409,
        type: "invalid_request_error",
        code: "webhook_endpoint_disabled",
        message: `The endpoint is disabled (${endpoint.disabledReason ?? "manual"}); enable it before redelivering.`,
      });
    }
    const id = c.req.param("message_id");
    const message = await c.var.deps.webhookDeliveries(endpoint.id).redeliver(id);
    if (!message) throw createNotFoundError("webhook_delivery", id);
    return c.json(formatWebhookDelivery(message), 202);
  });
}
