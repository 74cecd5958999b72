import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  createValidationError,
  createConflictError,
  createNotFoundError,
} from "../../api/errors/request-errors.ts";
import { formatApiKey } from "../../api/format/format-api-key.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { formatTenant } from "../../api/format/format-tenant.ts";
import { listItemsQuerySchema } from "../../api/schemas/conversation-schemas.ts";
import {
  createApiKeyBodySchema,
  createTenantBodySchema,
  rotateApiKeyBodySchema,
  tenantLimitsBodySchema,
} from "../../api/schemas/tenancy-schemas.ts";
import { formatTenantLimits } from "../../api/format/format-tenant.ts";
import { createTenantAdmin, type TenantAdmin } from "../../tenancy/create-tenant-admin.ts";
import type { AppEnv } from "../app-deps.ts";
import { readJsonBody, readOptionalJsonBody } from "../read-json-body.ts";
import { requireAdminToken } from "../access-guards.ts";

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

  app.post("/v1/admin/tenants", async (c) => {
    const body = await readJsonBody(c, createTenantBodySchema);
    return c.json(formatTenant(await readTenantAdmin(c).createTenant(ADMIN_ACTOR, body)));
  });

  app.get("/v1/admin/tenants", async (c) => {
    const query = listItemsQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const page = await c.var.deps.tenantStore.listTenants(query.data);
    if ("error" in page) throw createNotFoundError("tenant", query.data.after ?? "", "after");
    return c.json(formatItemList(page.data.map(formatTenant), { hasMore: page.hasMore }));
  });

  app.get("/v1/admin/tenants/:id", async (c) => {
    const id = c.req.param("id");
    const tenant = await c.var.deps.tenantStore.getTenant(id);
    if (!tenant) throw createNotFoundError("tenant", id);
    return c.json(formatTenant(tenant));
  });

  app.get("/v1/admin/tenants/:id/limits", async (c) => {
    const id = c.req.param("id");
    if (!(await c.var.deps.tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    return c.json(formatTenantLimits(id, await c.var.deps.limits(id).readLimits()));
  });

  app.put("/v1/admin/tenants/:id/limits", async (c) => {
    const body = await readJsonBody(c, tenantLimitsBodySchema);
    const id = c.req.param("id");
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
    return c.json(formatTenantLimits(id, limits));
  });

  app.post("/v1/admin/tenants/:id/keys", async (c) => {
    const body = await readJsonBody(c, createApiKeyBodySchema);
    const id = c.req.param("id");
    const issued = await readTenantAdmin(c).createApiKey(ADMIN_ACTOR, id, body);
    if (!issued) throw createNotFoundError("tenant", id);
    return c.json(formatApiKey(issued.record, issued.key));
  });

  app.get("/v1/admin/tenants/:id/keys", async (c) => {
    const id = c.req.param("id");
    const { tenantStore } = c.var.deps;
    if (!(await tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    const keys = await tenantStore.listApiKeys(id);
    return c.json(
      formatItemList(
        keys.map((key) => formatApiKey(key)),
        { hasMore: false },
      ),
    );
  });

  app.post("/v1/admin/tenants/:id/keys/:key_id/rotate", async (c) => {
    const body = await readOptionalJsonBody(c, rotateApiKeyBodySchema);
    const keyId = c.req.param("key_id");
    const result = await readTenantAdmin(c).rotateApiKey(
      ADMIN_ACTOR,
      c.req.param("id"),
      keyId,
      body.grace_seconds ?? 0,
    );
    if (!result.ok) {
      if (result.error === "key_not_found") throw createNotFoundError("api_key", keyId);
      throw createConflictError(
        "api_key_not_rotatable",
        `The API key '${keyId}' is revoked or already rotated; create a new key instead.`,
      );
    }
    return c.json(formatApiKey(result.issued.record, result.issued.key));
  });

  app.delete("/v1/admin/tenants/:id/keys/:key_id", async (c) => {
    const keyId = c.req.param("key_id");
    const key = await readTenantAdmin(c).revokeApiKey(ADMIN_ACTOR, c.req.param("id"), keyId);
    if (!key) throw createNotFoundError("api_key", keyId);
    return c.json(formatApiKey(key));
  });
}
