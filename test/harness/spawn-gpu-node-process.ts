import { inject } from "vitest";
import { adapterEnvName } from "../../gpu-nodes/src/config/node-config.ts";
import { spawnGpuNode, type GpuNodeProcess } from "../../infra/local/spawn-gpu-node.ts";

export type { GpuNodeProcess } from "../../infra/local/spawn-gpu-node.ts";

/** A real GPU node process on the generated tiny model, with short heartbeats for fleet tests. */
export function spawnGpuNodeProcess(
  nodeId: string,
  natsUrl: string,
  env: Record<string, string> = {},
): GpuNodeProcess {
  const models = inject("models");
  return spawnGpuNode({
    nodeId,
    natsUrl,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      MOL_LOG_LEVEL: "warn",
      MOL_BASE_MODEL: models.base,
      ...Object.fromEntries(Object.entries(models.adapters).map(([id, path]) => [adapterEnvName(id), path])),
      MOL_THREADS: "1",
      MOL_CONTEXT_SIZE: "4096",
      MOL_SLOTS_PER_ADAPTER: "4",
      MOL_HEARTBEAT_INTERVAL_MS: "300",
      MOL_HEARTBEAT_TTL_MS: "1500",
      ...env,
    },
  });
}
