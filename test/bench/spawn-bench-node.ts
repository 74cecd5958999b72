import { spawnGpuNode, type GpuNodeProcess } from "../../infra/local/spawn-gpu-node.ts";

/**
 * A GPU node process for benchmarks: enough KV slots that placement, not capacity, decides reuse. `modelEnv`
 * names the model and may override the defaults below (context, slots).
 */
export function spawnBenchNode(
  nodeId: string,
  natsUrl: string,
  modelEnv: Record<string, string>,
): GpuNodeProcess {
  return spawnGpuNode({
    nodeId,
    natsUrl,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      MOL_LOG_LEVEL: "warn",
      MOL_THREADS: "1",
      MOL_CONTEXT_SIZE: "4096",
      MOL_SLOTS_PER_ADAPTER: "24",
      MOL_MAX_CONCURRENT: "16",
      MOL_HEARTBEAT_INTERVAL_MS: "500",
      MOL_HEARTBEAT_TTL_MS: "3000",
      ...modelEnv,
    },
  });
}
