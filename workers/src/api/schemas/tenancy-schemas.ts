import { z } from "@hono/zod-openapi";
import { API_KEY_SCOPES } from "../../tenancy/api-key-scope.ts";
import { pageQueryFields } from "./page-query-fields.ts";
import { pathIdSchema } from "./path-id.ts";

export const MAX_NAME_CHARS = 128;
/** A week: long enough to roll a fleet of clients, short enough that a forgotten old key does not linger. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;

/** `POST /v1/admin/tenants`. */
export const createTenantBodySchema = z
  .strictObject({ name: z.string().trim().min(1).max(MAX_NAME_CHARS) })
  .openapi("CreateTenantRequest");

/** `POST /v1/admin/tenants/{id}/keys`. */
export const createApiKeyBodySchema = z
  .strictObject({
    name: z.string().trim().min(1).max(MAX_NAME_CHARS).optional(),
    scopes: z.array(z.enum(API_KEY_SCOPES)).min(1).max(API_KEY_SCOPES.length).optional().openapi({
      description: "Default: conversations, responses, chat. `admin` reads the tenant's audit log.",
    }),
  })
  .openapi("CreateApiKeyRequest");

/** `POST /v1/admin/tenants/{id}/keys/{key_id}/rotate`; the body may be absent. */
export const rotateApiKeyBodySchema = z
  .strictObject({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROTATION_GRACE_SECONDS)
      .optional()
      .openapi({ description: "How long the old key keeps working; 0 (default): it is refused at once." }),
  })
  .openapi("RotateApiKeyRequest");

export const tenantIdParamsSchema = z.object({
  id: pathIdSchema("id", "ten_0123456789abcdef0123456789abcdef"),
});

export const apiKeyIdParamsSchema = tenantIdParamsSchema.extend({
  key_id: pathIdSchema("key_id", "key_0123456789abcdef0123456789abcdef"),
});

/** `GET /v1/audit_log`: newest first by default; `after` is an entry id (`aud_<seq>`). */
export const auditLogQuerySchema = z
  .object({
    after: z
      .string()
      .regex(/^aud_[1-9][0-9]{0,14}$/, { message: "expected an audit entry id (aud_<n>)" })
      .optional()
      .openapi({ param: { name: "after", in: "query" } }),
    ...pageQueryFields,
  })
  .openapi("ListAuditLogQuery");

const limitValue = z.int().min(1).max(1e15).nullable().optional();

/** `PUT /v1/admin/tenants/{id}/limits`: the tenant's plan; `null` clears an override back to the default. */
export const tenantLimitsBodySchema = z
  .strictObject({
    requests_per_minute: limitValue,
    tokens_per_minute: limitValue,
    monthly_tokens: limitValue,
  })
  .openapi("TenantLimitsRequest");
