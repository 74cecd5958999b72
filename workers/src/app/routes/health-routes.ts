import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { formatModelList } from "../../api/format/format-model-list.ts";
import type { Context } from "hono";
import { sha256Hex, timingSafeEqualText } from "../../../../schema/harness/content-hash.ts";
import { readBearerToken } from "../access-guards.ts";
import type { AppEnv } from "../app-deps.ts";
import { TENANT_SECURITY, errorResponses, jsonResponse } from "../route-contract.ts";

const livezRoute = createRoute({
  method: "get",
  path: "/livez",
  responses: { 200: jsonResponse("The edge runs: `{status: ok}`") },
});

const readinessResponses = {
  200: jsonResponse(
    "NATS reachable and a GPU node live. Public: only `status`; with the admin token as bearer: NATS, live nodes and their load",
  ),
  503: jsonResponse("Not serving (`status: unavailable`), with the same fields"),
};
const readyzRoute = createRoute({ method: "get", path: "/readyz", responses: readinessResponses });
const healthzRoute = createRoute({
  method: "get",
  path: "/healthz",
  description: "`/readyz` under its older name.",
  responses: readinessResponses,
});

const modelsRoute = createRoute({
  method: "get",
  path: "/v1/models",
  security: TENANT_SECURITY,
  responses: { 200: jsonResponse("`mol` and `mol:<label>` models"), ...errorResponses(401) },
});

/**
 * Probes for load balancers and orchestrators, public by design, so they say only whether the edge serves:
 * node ids, engines and load are the fleet's shape, shown to the operator's admin token alone.
 * - `GET /livez`: the Worker runs (200, touches nothing); `x-mol-launch-id` tells the local launcher this edge is
 *   the one it started, not another server that held the port.
 * - `GET /readyz`: NATS is reachable and at least one GPU node is live (200), else 503.
 * - `GET /healthz`: `/readyz` under its older name.
 */
export function registerHealthRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(livezRoute, (c) => {
    const { launchId } = c.var.deps;
    if (launchId !== undefined) c.header("x-mol-launch-id", launchId);
    return c.json({ status: "ok" }, 200);
  });
  app.openapi(readyzRoute, readiness);
  app.openapi(healthzRoute, readiness);
}

async function readiness(c: Context<AppEnv>) {
  const fleet = await c.var.deps.readFleetHealth();
  const healthy = fleet.nats === "ok" && fleet.liveNodes > 0;
  const status = healthy ? "ok" : "unavailable";
  if (!(await isOperator(c))) return c.json({ status }, healthy ? 200 : 503);
  return c.json(
    {
      status,
      nats: fleet.nats,
      live_nodes: fleet.liveNodes,
      nodes: fleet.nodes.map((n) => ({
        id: n.nodeId,
        engine: n.engine,
        in_flight: n.inFlight,
        adapters: n.adapters.map((a) => a.id),
      })),
    },
    healthy ? 200 : 503,
  );
}

/** Whether the caller presented the admin token (compared as digests, like requireAdminToken). */
async function isOperator(c: Context<AppEnv>): Promise<boolean> {
  const { adminToken } = c.var.deps;
  const token = readBearerToken(c.req.header("authorization"));
  if (!adminToken || token === undefined) return false;
  return timingSafeEqualText(await sha256Hex(token), await sha256Hex(adminToken));
}

/** `GET /v1/models`: `mol` (routed per turn) and `mol:<label>` for each specialist. */
export function registerModelRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(modelsRoute, (c) => c.json(formatModelList(DEFAULT_HARNESS.router.labels), 200));
}
