import type { OpenAPIHono } from "@hono/zod-openapi";
import { createValidationError } from "../../api/errors/request-errors.ts";
import { formatAuditEntry, readAuditSeq } from "../../api/format/format-audit-entry.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { auditLogQuerySchema } from "../../api/schemas/tenancy-schemas.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";

/** `GET /v1/audit_log`: the calling key's own tenant's changes, for keys with the `admin` scope. */
export function registerAuditLogRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/v1/audit_log", requireScope("admin"), async (c) => {
    const query = auditLogQuerySchema.safeParse(c.req.query());
    if (!query.success) throw createValidationError(query.error.issues);
    const { after, ...rest } = query.data;
    const afterSeq = after === undefined ? undefined : readAuditSeq(after);
    const page = await c.var.deps.tenantStore.listAuditLog(c.var.principal.tenantId, {
      ...rest,
      ...(afterSeq === undefined ? {} : { afterSeq }),
    });
    return c.json(formatItemList(page.data.map(formatAuditEntry), { hasMore: page.hasMore }));
  });
}
