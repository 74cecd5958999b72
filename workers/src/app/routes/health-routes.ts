import type { OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { formatModelList } from "../../api/format/format-model-list.ts";
import type { AppEnv } from "../app-deps.ts";

/** `GET /healthz`: 200 only when NATS is reachable and at least one GPU node is live. */
export function registerHealthRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/healthz", async (c) => {
    const fleet = await c.var.deps.readFleetHealth();
    const healthy = fleet.nats === "ok" && fleet.liveNodes > 0;
    return c.json(
      {
        status: healthy ? "ok" : "unavailable",
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
  });
}

/** `GET /v1/models`: `mol` (routed per turn) and `mol:<label>` for each specialist. */
export function registerModelRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/v1/models", (c) => c.json(formatModelList(DEFAULT_HARNESS.router.labels)));
}
