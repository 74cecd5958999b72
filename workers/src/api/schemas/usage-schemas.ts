import { z } from "@hono/zod-openapi";
import { USAGE_GROUPS } from "../../usage/usage-report.ts";

/** A UTC calendar day, `YYYY-MM-DD`, that exists (2026-02-30 does not): the document's `format: date`. */
const day = z.iso.date({ message: "expected a calendar day that exists, YYYY-MM-DD" });

/** `GET /v1/usage` and `GET /v1/admin/tenants/{id}/usage`: which split, which days, which format. */
export const usageQuerySchema = z
  .strictObject({
    group_by: z
      .enum(USAGE_GROUPS)
      .default("day")
      .openapi({ param: { name: "group_by", in: "query" }, description: "What each row sums over" }),
    from: day.optional().openapi({
      param: { name: "from", in: "query" },
      description: "First UTC day, included",
      example: "2026-12-01",
    }),
    to: day.optional().openapi({
      param: { name: "to", in: "query" },
      description: "Last UTC day, included",
      example: "2026-12-31",
    }),
    format: z
      .enum(["json", "csv"])
      .optional()
      .openapi({ param: { name: "format", in: "query" }, description: "`csv`, or send `Accept: text/csv`" }),
  })
  .refine((query) => query.from === undefined || query.to === undefined || query.from <= query.to, {
    message: "'from' is after 'to'",
    path: ["from"],
  })
  .openapi("UsageQuery");
export type UsageQueryParams = z.infer<typeof usageQuerySchema>;
