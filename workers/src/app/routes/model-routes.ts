import type { OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { formatModelList } from "../../api/format/format-model-list.ts";
import type { AppEnv } from "../app-deps.ts";

/** `GET /v1/models`: `mol` (routed per turn) and `mol:<label>` for each specialist. */
export function registerModelRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/v1/models", (c) => c.json(formatModelList(DEFAULT_HARNESS.router.labels)));
}
