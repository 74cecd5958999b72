import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./app-deps.ts";
import { describeJsonResponse } from "./register-openapi-paths.ts";

const json = describeJsonResponse;
const security = [{ bearer: [] }];
const id = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, example: "gc_0123" }) });
const sourceBody = z
  .object({ source: z.string().openapi({ description: "One JSX/TSX ES module, at most 64 KiB of UTF-8" }) })
  .openapi("GenuiComponentCreate");

/** The GenUI paths of the OpenAPI document (the handlers read and validate bodies themselves, as elsewhere). */
export function registerGenuiOpenApiPaths(app: OpenAPIHono<AppEnv>): void {
  const paths = [
    createRoute({
      method: "post",
      path: "/v1/genui/components",
      security,
      request: {
        body: {
          content: {
            "application/json": { schema: sourceBody },
            "text/jsx": { schema: z.string() },
            "text/tsx": { schema: z.string() },
          },
          required: true,
        },
      },
      responses: {
        200: json(
          "Valid and stored: `{id, status: valid, report, render_url}`; render_url opens without a key, 1 h",
        ),
        400: json("Invalid request (OpenAI error envelope)"),
        401: json("Missing or wrong API key"),
        403: json("The API key lacks the `responses` scope"),
        422: json(
          "Rejected: the error envelope plus `status: rejected` and the `report` (rule, line, column)",
        ),
      },
    }),
    createRoute({
      method: "get",
      path: "/v1/genui/components/{id}",
      security,
      request: { params: id },
      responses: { 200: json("The component and its validation report"), 404: json("Unknown component") },
    }),
  ];
  for (const route of paths) app.openAPIRegistry.registerPath(route);
}
