import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { TestModelPaths } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import type { Engine } from "../../gpu-nodes/src/engine/engine.ts";
import {
  createLlamaEngine,
  type LlamaEngineOptions,
} from "../../gpu-nodes/src/engine/llama/create-llama-engine.ts";
import { fingerprintFile } from "../../gpu-nodes/src/runtime/fingerprint-file.ts";
import type { NodeLogger } from "../../gpu-nodes/src/service/serve-generate.ts";
import {
  startGpuNode,
  type GpuNode,
  type GpuNodeOptions,
} from "../../gpu-nodes/src/service/start-gpu-node.ts";

/** Adapter id that runs on the bare base, so tests can compare a LoRA's output with the base's. */
export const BARE_BASE_ADAPTER = "base";

export interface TestNode {
  node: GpuNode;
  engine: Engine;
  /** The node's own connection. */
  nodeNc: NatsConnection;
  /** A separate connection that plays the edge. */
  client: NatsConnection;
  logs: Array<{ level: string; message: string; fields: object }>;
  stop(): Promise<void>;
}

export function createMemoryLogger(): { logger: NodeLogger; logs: TestNode["logs"] } {
  const logs: TestNode["logs"] = [];
  const push = (level: string) => (fields: object, message: string) =>
    void logs.push({ level, message, fields });
  return { logger: { info: push("info"), warn: push("warn"), error: push("error") }, logs };
}

export function buildTinyEngineOptions(
  models: TestModelPaths,
  overrides: Partial<LlamaEngineOptions> = {},
): LlamaEngineOptions {
  return {
    baseModelPath: models.base,
    adapters: [
      ...Object.entries(models.adapters).map(([id, loraPath]) => ({ id, loraPath })),
      { id: BARE_BASE_ADAPTER },
    ],
    threads: 1,
    contextSize: 1024,
    slotsPerAdapter: 2,
    maxWaitingPerAdapter: 2,
    now: () => performance.now(),
    fingerprintFile,
    ...overrides,
  };
}

/** Starts a real GPU node (llama.cpp on the generated tiny model) in this process, on a real nats-server. */
export async function startTestNode(options: {
  natsUrl: string;
  models: TestModelPaths;
  nodeId?: string;
  engine?: Partial<LlamaEngineOptions>;
  node?: Partial<
    Pick<
      GpuNodeOptions,
      | "maxConcurrent"
      | "maxConcurrentSummaries"
      | "maxQueued"
      | "heartbeatIntervalMs"
      | "heartbeatTtlMs"
      | "metricsPort"
      | "tracer"
    >
  >;
  /** Wraps the real engine (e.g. to hold one request long enough to observe it in flight). */
  wrapEngine?: (engine: Engine) => Engine;
}): Promise<TestNode> {
  const llama = await createLlamaEngine(buildTinyEngineOptions(options.models, options.engine));
  const engine = options.wrapEngine ? options.wrapEngine(llama) : llama;
  const nodeNc = await connect({ servers: options.natsUrl, name: "test-gpu-node" });
  const client = await connect({ servers: options.natsUrl, name: "test-edge" });
  const { logger, logs } = createMemoryLogger();
  const node = await startGpuNode({
    nc: nodeNc,
    engine,
    nodeId: options.nodeId ?? "test-node",
    logger,
    now: () => performance.now(),
    clock: () => Date.now(),
    heartbeatIntervalMs: 500,
    heartbeatTtlMs: 2_000,
    ...options.node,
  });
  return {
    node,
    engine,
    nodeNc,
    client,
    logs,
    async stop() {
      await node.stop(1_000);
      await Promise.allSettled([client.close(), nodeNc.close()]);
    },
  };
}
