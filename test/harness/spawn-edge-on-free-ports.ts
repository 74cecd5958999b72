import { spawnEdge, type EdgeProcess, type EdgeSettings } from "../../infra/local/spawn-edge.ts";
import { findFreePort } from "./free-port.ts";

const EDGE_START_ATTEMPTS = 3;

/**
 * Another process may bind the same free port between the check and wrangler's bind; that is the one start failure
 * worth retrying, on fresh ports. No vitest import, so benchmarks share it.
 */
export async function spawnEdgeOnFreePorts(
  settings: Omit<EdgeSettings, "port" | "inspectorPort">,
): Promise<EdgeProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnEdge({
        ...settings,
        port: await findFreePort(),
        inspectorPort: await findFreePort(),
      });
    } catch (error) {
      if (attempt >= EDGE_START_ATTEMPTS || !String(error).includes("Address already in use")) throw error;
    }
  }
}
