import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EdgeProcess } from "../../infra/local/spawn-edge.ts";
import { spawnEdgeOnFreePorts } from "../harness/spawn-edge-on-free-ports.ts";

/** The tenant's default request and token rates are for people; a benchmark would measure the limiter instead. */
const UNLIMITED_TENANT = { MOL_DEFAULT_RPM: "1000000", MOL_DEFAULT_TPM: "1000000000" };

/** The edge in `wrangler dev` on its own fresh state, for one benchmark run; `stop` also removes the state. */
export async function spawnBenchEdge(options: {
  name: string;
  natsWsUrl: string;
  devApiKey: string;
  vars?: Record<string, string>;
  onLog?: (line: string) => void;
}): Promise<EdgeProcess> {
  const persistDir = await mkdtemp(join(tmpdir(), `molmesh-bench-${options.name}-`));
  const edge = await spawnEdgeOnFreePorts({
    natsWsUrl: options.natsWsUrl,
    devApiKey: options.devApiKey,
    persistDir,
    vars: { ...UNLIMITED_TENANT, ...options.vars },
    ...(options.onLog ? { onLog: options.onLog } : {}),
  });
  return {
    url: edge.url,
    async stop() {
      await edge.stop();
      await rm(persistDir, { recursive: true, force: true });
    },
  };
}
