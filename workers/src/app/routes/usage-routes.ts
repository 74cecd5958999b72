import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createNotFoundError, createValidationError } from "../../api/errors/request-errors.ts";
import { formatUsageReport, formatUsageReportCsv } from "../../api/format/format-usage-report.ts";
import { usageQuerySchema } from "../../api/schemas/usage-schemas.ts";
import type { UsageQuery } from "../../usage/usage-report.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";

/**
 * Token usage by end user, key, day or adapter: `GET /v1/usage` for the calling key's own tenant (keys with the
 * `admin` scope: it shows every key's and end user's usage), `GET /v1/admin/tenants/{id}/usage` for the operator
 * (behind the admin token, see admin-routes.ts). JSON by default; CSV with `format=csv` or `Accept: text/csv`.
 */
export function registerUsageRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/v1/usage", requireScope("admin"), (c) => serveUsage(c, c.var.principal.tenantId));

  app.get("/v1/admin/tenants/:id/usage", async (c) => {
    const id = c.req.param("id");
    // Validate first: a bad query is a 400 whether or not the tenant exists.
    readUsageQuery(c);
    if (!(await c.var.deps.tenantStore.getTenant(id))) throw createNotFoundError("tenant", id);
    return serveUsage(c, id);
  });
}

async function serveUsage(c: Context<AppEnv>, tenantId: string): Promise<Response> {
  const { query, csv } = readUsageQuery(c);
  const buckets = await c.var.deps.usage.query(tenantId, query);
  if (!csv) return c.json(formatUsageReport(query, buckets));
  return c.body(formatUsageReportCsv(query, buckets), 200, {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": `attachment; filename="usage-${tenantId}-by-${query.groupBy}.csv"`,
  });
}

function readUsageQuery(c: Context<AppEnv>): { query: UsageQuery; csv: boolean } {
  const parsed = usageQuerySchema.safeParse(c.req.query());
  if (!parsed.success) throw createValidationError(parsed.error.issues);
  const { group_by: groupBy, from, to, format } = parsed.data;
  const accept = c.req.header("accept") ?? "";
  const csv = format === "csv" || (format === undefined && /\btext\/csv\b/i.test(accept));
  return { query: { groupBy, from, to }, csv };
}
