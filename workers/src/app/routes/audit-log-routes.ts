import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { formatAuditEntry, readAuditSeq } from "../../api/format/format-audit-entry.ts";
import { formatItemList } from "../../api/format/format-item-list.ts";
import { auditLogQuerySchema } from "../../api/schemas/tenancy-schemas.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";
import { TENANT_SECURITY, errorResponse, errorResponses, jsonResponse } from "../route-contract.ts";

const auditLogRoute = createRoute({
  method: "get",
  path: "/v1/audit_log",
  security: TENANT_SECURITY,
  middleware: [requireScope("admin")] as const,
  request: { query: auditLogQuerySchema },
  responses: {
    200: jsonResponse("A page of the key's own tenant's audit entries"),
    ...errorResponses(400, 401),
    403: errorResponse("The API key lacks the `admin` scope"),
  },
});

/** `GET /v1/audit_log`: the calling key's own tenant's changes, for keys with the `admin` scope. */
export function registerAuditLogRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(auditLogRoute, async (c) => {
    const { after, ...rest } = c.req.valid("query");
    const afterSeq = after === undefined ? undefined : readAuditSeq(after);
    const page = await c.var.deps.tenantStore.listAuditLog(c.var.principal.tenantId, {
      ...rest,
      ...(afterSeq === undefined ? {} : { afterSeq }),
    });
    return c.json(formatItemList(page.data.map(formatAuditEntry), { hasMore: page.hasMore }), 200);
  });
}
