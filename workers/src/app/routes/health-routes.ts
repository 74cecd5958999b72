import type { OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { formatModelList } from "../../api/format/format-model-list.ts";
import type { Context } from "hono";
import { sha256Hex, timingSafeEqualText } from "../../../../schema/harness/content-hash.ts";
import { readBearerToken } from "../access-guards.ts";
import type { AppEnv } from "../app-deps.ts";

/**
 * Probes for load balancers and orchestrators, public by design, so they say only whether the edge serves:
 * node ids, engines and load are the fleet's shape, shown to the operator's admin token alone.
 * - `GET /livez`: the Worker runs (200, touches nothing); `x-mol-launch-id` tells the local launcher this edge is
 *   the one it started, not another server that held the port.
 * - `GET /readyz`: NATS is reachable and at least one GPU node is live (200), else 503.
 * - `GET /healthz`: `/readyz` under its older name.
 */
export function registerHealthRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/livez", (c) => {
    const { launchId } = c.var.deps;
    if (launchId !== undefined) c.header("x-mol-launch-id", launchId);
    return c.json({ status: "ok" });
  });
  app.get("/readyz", readiness);
  app.get("/healthz", readiness);
}

async function readiness(c: Context<AppEnv>): Promise<Response> {
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
  app.get("/v1/models", (c) => c.json(formatModelList(DEFAULT_HARNESS.router.labels)));
}
