import { connect } from "@nats-io/transport-node";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";
import { startGpuNode } from "../../gpu-nodes/src/service/start-gpu-node.ts";
import { createMemoryLogger } from "../harness/start-test-node.ts";
import { createInstantEngine } from "./create-instant-engine.ts";

/** A GPU node on the instant engine, in this process: what the edge's own time is measured against. */
export async function startInstantNode(natsUrl: string, nodeId: string): Promise<{ stop(): Promise<void> }> {
  const nc = await connect({ servers: natsUrl });
  const node = await startGpuNode({
    nc,
    engine: createInstantEngine(DEFAULT_ADAPTER_IDS),
    nodeId,
    logger: createMemoryLogger().logger,
    now: () => performance.now(),
    clock: () => Date.now(),
  });
  return {
    async stop() {
      await node.stop(0);
      await nc.close();
    },
  };
}
