import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createConflictError, createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatApiKey } from "../../api/format/format-api-key.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatTenant } from "../../api/format/format-tenant.ts";
import { listItemsQuerySchema } from "../../api/schemas/conversation-schemas.ts";
import {
  apiKeyIdParamsSchema,
  createApiKeyBodySchema,
  createTenantBodySchema,
  rotateApiKeyBodySchema,
  tenantIdParamsSchema,
  tenantLimitsBodySchema,
} from "../../api/schemas/tenancy-schemas.ts";
import { formatTenantLimits } from "../../api/format/format-tenant.ts";
import { createTenantAdmin, type TenantAdmin } from "../../tenancy/create-tenant-admin.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireAdminToken } from "../access-guards.ts";
import {
  ADMIN_SECURITY,
  JSON_BODY_ERRORS,
  errorResponse,
  errorResponses,
  jsonBody,
  jsonResponse,
} from "../route-contract.ts";

/** What the admin token guard answers (access-guards.ts). */
export const ADMIN_ERRORS = {
  401: errorResponse("Missing or wrong admin token"),
  403: errorResponse("A tenant API key was sent, or the admin API is disabled (no MOL_ADMIN_TOKEN)"),
};
const security = ADMIN_SECURITY;
const read = { ...errorResponses(400), ...ADMIN_ERRORS, 404: errorResponse("Unknown tenant") };
const write = {
  ...errorResponses(...JSON_BODY_ERRORS),
  ...ADMIN_ERRORS,
  404: errorResponse("Unknown tenant"),
};

const routes = {
  createTenant: createRoute({
    method: "post",
    path: "/v1/admin/tenants",
    security,
    ...jsonBody(createTenantBodySchema),
    responses: { 200: jsonResponse("The tenant"), ...errorResponses(...JSON_BODY_ERRORS), ...ADMIN_ERRORS },
  }),
  listTenants: createRoute({
    method: "get",
    path: "/v1/admin/tenants",
    security,
    request: { query: listItemsQuerySchema },
    responses: {
      200: jsonResponse("A page of tenants, newest first"),
      ...read,
      404: errorResponse("`after` names no tenant"),
    },
  }),
  retrieveTenant: createRoute({
    method: "get",
    path: "/v1/admin/tenants/{id}",
    security,
    request: { params: tenantIdParamsSchema },
    responses: { 200: jsonResponse("The tenant"), ...read },
  }),
  readLimits: createRoute({
    method: "get",
    path: "/v1/admin/tenants/{id}/limits",
    security,
    request: { params: tenantIdParamsSchema },
    responses: { 200: jsonResponse("The tenant's limits in force (defaults with its overrides)"), ...read },
  }),
  setLimits: createRoute({
    method: "put",
    path: "/v1/admin/tenants/{id}/limits",
    security,
    ...jsonBody(tenantLimitsBodySchema, { params: tenantIdParamsSchema }),
    responses: { 200: jsonResponse("The tenant's limits in force; audited"), ...write },
  }),
  createKey: createRoute({
    method: "post",
    path: "/v1/admin/tenants/{id}/keys",
    security,
    ...jsonBody(createApiKeyBodySchema, { params: tenantIdParamsSchema }),
    responses: { 200: jsonResponse("The key; `key` holds the secret, shown this once"), ...write },
  }),
  listKeys: createRoute({
    method: "get",
    path: "/v1/admin/tenants/{id}/keys",
    security,
    request: { params: tenantIdParamsSchema },
    responses: { 200: jsonResponse("The tenant's keys, revoked ones included; never a secret"), ...read },
  }),
  rotateKey: createRoute({
    method: "post",
    path: "/v1/admin/tenants/{id}/keys/{key_id}/rotate",
    security,
    ...jsonBody(rotateApiKeyBodySchema, { params: apiKeyIdParamsSchema }, { optional: true }),
    responses: {
      200: jsonResponse(
        "The successor key (secret shown this once); the old one is refused after `grace_seconds`",
      ),
      ...write,
      404: errorResponse("Unknown key of this tenant"),
      409: errorResponse("The key is revoked or already rotated"),
    },
  }),
  revokeKey: createRoute({
    method: "delete",
    path: "/v1/admin/tenants/{id}/keys/{key_id}",
    security,
    request: { params: apiKeyIdParamsSchema },
    responses: {
      200: jsonResponse("The key, revoked now"),
      ...read,
      404: errorResponse("Unknown key of this tenant"),
    },
  }),
};

/** Who the audit log names for changes made with the admin token. */
const ADMIN_ACTOR = "admin";

function readTenantAdmin(c: Context<AppEnv>): TenantAdmin {
  const { deps } = c.var;
  return createTenantAdmin({ store: deps.tenantStore, now: deps.now, newId: (prefix) => deps.newId(prefix) });
}

/**
 * `/v1/admin/*`: the operator manages tenants and their keys with the admin token (never a tenant key). Keys
 * are shown once, when created or rotated; listings carry only the public prefix and last four characters.
 */
export function registerAdminRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/admin/*", requireAdminToken);

  app.openapi(routes.createTenant, async (c) => {
    const body = c.req.valid("json");
    return c.json(formatTenant(await readTenantAdmin(c).createTenant(ADMIN_ACTOR, body)), 200);
  });

  app.openapi(routes.listTenants, async (c) => {
    const query = c.req.valid("query");
    const page = await c.var.deps.tenantStore.listTenants(query);
    if ("error" in page) throw createNotFoundError("tenant", query.after ?? "", "after");
    return c.json(formatItemList(page.data.map(formatTenant), { hasMore: page.hasMore }), 200);
  });

  app.openapi(routes.retrieveTenant, async (c) => {
    const { id } = c.req.valid("param");
    const tenant = await c.var.deps.tenantStore.getTenant(id);
    if (!tenant) throw createNotFoundError("tenant", id);
    return c.json(formatTenant(tenant), 200);
  });

  app.openapi(routes.readLimits, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await c.var.deps.tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    return c.json(formatTenantLimits(id, await c.var.deps.limits(id).readLimits()), 200);
  });

  app.openapi(routes.setLimits, async (c) => {
    const body = c.req.valid("json");
    const { id } = c.req.valid("param");
    const { deps } = c.var;
    if (!(await deps.tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    const limits = await deps.limits(id).setLimits({
      ...(body.requests_per_minute !== undefined ? { requestsPerMinute: body.requests_per_minute } : {}),
      ...(body.tokens_per_minute !== undefined ? { tokensPerMinute: body.tokens_per_minute } : {}),
      ...(body.monthly_tokens !== undefined ? { monthlyTokens: body.monthly_tokens } : {}),
    });
    // The limits live in the tenant's limiter object, not D1: the audit entry follows the change it records.
    await deps.tenantStore.appendAudit({
      tenantId: id,
      actor: ADMIN_ACTOR,
      action: "tenant.limits_updated",
      target: id,
      details: { ...body },
      createdAt: Math.floor(deps.now() / 1000),
    });
    return c.json(formatTenantLimits(id, limits), 200);
  });

  app.openapi(routes.createKey, async (c) => {
    const body = c.req.valid("json");
    const { id } = c.req.valid("param");
    const issued = await readTenantAdmin(c).createApiKey(ADMIN_ACTOR, id, body);
    if (!issued) throw createNotFoundError("tenant", id);
    return c.json(formatApiKey(issued.record, issued.key), 200);
  });

  app.openapi(routes.listKeys, async (c) => {
    const { id } = c.req.valid("param");
    const { tenantStore } = c.var.deps;
    if (!(await tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    const keys = await tenantStore.listApiKeys(id);
    return c.json(
      formatItemList(
        keys.map((key) => formatApiKey(key)),
        { hasMore: false },
      ),
      200,
    );
  });

  app.openapi(routes.rotateKey, async (c) => {
    const body = c.req.valid("json");
    const { id, key_id: keyId } = c.req.valid("param");
    const result = await readTenantAdmin(c).rotateApiKey(ADMIN_ACTOR, id, keyId, body.grace_seconds ?? 0);
    if (!result.ok) {
      if (result.error === "key_not_found") throw createNotFoundError("api_key", keyId);
      throw createConflictError(
        "api_key_not_rotatable",
        `The API key '${keyId}' is revoked or already rotated; create a new key instead.`,
      );
    }
    return c.json(formatApiKey(result.issued.record, result.issued.key), 200);
  });

  app.openapi(routes.revokeKey, async (c) => {
    const { id, key_id: keyId } = c.req.valid("param");
    const key = await readTenantAdmin(c).revokeApiKey(ADMIN_ACTOR, id, keyId);
    if (!key) throw createNotFoundError("api_key", keyId);
    return c.json(formatApiKey(key), 200);
  });
}
