import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createNotFoundError } from "../../api/errors/request-errors.ts";
import { formatUsageReport, formatUsageReportCsv } from "../../api/format/format-usage-report.ts";
import { usageQuerySchema, type UsageQueryParams } from "../../api/schemas/usage-schemas.ts";
import { tenantIdParamsSchema } from "../../api/schemas/tenancy-schemas.ts";
import type { UsageQuery } from "../../usage/usage-report.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";
import {
  ADMIN_SECURITY,
  TENANT_SECURITY,
  errorResponse,
  errorResponses,
  formattedObjectSchema,
} from "../route-contract.ts";
import { ADMIN_ERRORS } from "./admin-routes.ts";

const usageAnswer = {
  description:
    "One row per group: the group's value (`user`, `key_id`, `day` or `adapter`), `requests` (turns), `hops`, " +
    "`input_tokens` (cached included), `cached_input_tokens`, `output_tokens`, `total_tokens`",
  content: {
    "application/json": { schema: formattedObjectSchema },
    "text/csv": { schema: z.string() },
  },
};

const tenantUsageRoute = createRoute({
  method: "get",
  path: "/v1/usage",
  security: TENANT_SECURITY,
  middleware: [requireScope("admin")] as const,
  description: "The calling key's tenant's token usage (a key with the `admin` scope).",
  request: { query: usageQuerySchema },
  responses: {
    200: usageAnswer,
    ...errorResponses(400, 401),
    403: errorResponse("The API key lacks the `admin` scope"),
  },
});

const adminUsageRoute = createRoute({
  method: "get",
  path: "/v1/admin/tenants/{id}/usage",
  security: ADMIN_SECURITY,
  description: "A tenant's token usage, for the operator.",
  request: { params: tenantIdParamsSchema, query: usageQuerySchema },
  responses: {
    200: usageAnswer,
    ...errorResponses(400),
    ...ADMIN_ERRORS,
    404: errorResponse("Unknown tenant"),
  },
});

/**
 * Token usage by end user, key, day or adapter: `GET /v1/usage` for the calling key's own tenant (keys with the
 * `admin` scope: it shows every key's and end user's usage), `GET /v1/admin/tenants/{id}/usage` for the operator
 * (behind the admin token, see admin-routes.ts). JSON by default; CSV with `format=csv` or `Accept: text/csv`.
 */
export function registerUsageRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(tenantUsageRoute, (c) => serveUsage(c, c.var.principal.tenantId, c.req.valid("query")));

  // The query is validated first: a bad query is a 400 whether or not the tenant exists.
  app.openapi(adminUsageRoute, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await c.var.deps.tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    return serveUsage(c, id, c.req.valid("query"));
  });
}

async function serveUsage(c: Context<AppEnv>, tenantId: string, params: UsageQueryParams): Promise<Response> {
  const { group_by: groupBy, from, to, format } = params;
  const query: UsageQuery = { groupBy, from, to };
  const accept = c.req.header("accept") ?? "";
  const csv = format === "csv" || (format === undefined && /\btext\/csv\b/i.test(accept));
  const buckets = await c.var.deps.usage.query(tenantId, query);
  if (!csv) return c.json(formatUsageReport(query, buckets));
  return c.body(formatUsageReportCsv(query, buckets), 200, {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": `attachment; filename="usage-${tenantId}-by-${query.groupBy}.csv"`,
  });
}
