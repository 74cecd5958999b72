import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { usageQuerySchema } from "../api/schemas/usage-schemas.ts";
import { tenantIdParamsSchema } from "../api/schemas/tenancy-schemas.ts";
import type { AppEnv } from "./app-deps.ts";
import { describeJsonResponse } from "./register-openapi-paths.ts";

const json = describeJsonResponse;
const usageAnswer = {
  description:
    "One row per group: the group's value (`user`, `key_id`, `day` or `adapter`), `requests` (turns), `hops`, " +
    "`input_tokens` (cached included), `cached_input_tokens`, `output_tokens`, `total_tokens`",
  content: {
    "application/json": { schema: z.looseObject({}) },
    "text/csv": { schema: z.string() },
  },
};

/** The usage paths of the OpenAPI document (the handlers validate the query themselves, as elsewhere). */
export function registerUsageOpenApiPaths(app: OpenAPIHono<AppEnv>): void {
  const paths = [
    createRoute({
      method: "get",
      path: "/v1/usage",
      security: [{ bearer: [] }],
      description: "The calling key's tenant's token usage (a key with the `admin` scope).",
      request: { query: usageQuerySchema },
      responses: {
        200: usageAnswer,
        400: json("Invalid query (OpenAI error envelope)"),
        401: json("Missing or wrong API key"),
        403: json("The API key lacks the `admin` scope"),
      },
    }),
    createRoute({
      method: "get",
      path: "/v1/admin/tenants/{id}/usage",
      security: [{ adminToken: [] }],
      description: "A tenant's token usage, for the operator.",
      request: { params: tenantIdParamsSchema, query: usageQuerySchema },
      responses: {
        200: usageAnswer,
        400: json("Invalid query (OpenAI error envelope)"),
        401: json("Missing or wrong admin token"),
        403: json("A tenant API key was sent, or the admin API is disabled (no MOL_ADMIN_TOKEN)"),
        404: json("Unknown tenant"),
      },
    }),
  ];
  for (const route of paths) app.openAPIRegistry.registerPath(route);
}
