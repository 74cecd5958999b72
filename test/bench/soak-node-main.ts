/**
 * A GPU node process for `npm run bench:soak` whose engine streams a scripted answer at a fixed pace instead of
 * running a model: the soak tests the mesh's fault handling (SIGKILL, NATS restart, failover), and 10,000 turns
 * of a real model would take hours on a 2-core box. Everything else is the real node: NATS, heartbeats,
 * admission, the wire. The answer streams for a while (MOL_SOAK_WORDS words, MOL_SOAK_WORD_MS apart), so a
 * SIGKILL lands mid-stream and the edge has a continuation to take over.
 */
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import { startGpuNode } from "../../gpu-nodes/src/service/start-gpu-node.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";
import { createInstantEngine } from "./create-instant-engine.ts";

const env = process.env;
const nodeId = env.MOL_NODE_ID ?? `soak-${process.pid}`;
const nc = await connect({
  servers: (env.MOL_NATS_URL ?? "nats://127.0.0.1:4222").split(","),
  name: `molmesh-soak-node-${nodeId}`,
  maxReconnectAttempts: -1,
  reconnectTimeWait: 250,
});
await startGpuNode({
  nc,
  engine: createInstantEngine(DEFAULT_ADAPTER_IDS, {
    words: Number(env.MOL_SOAK_WORDS ?? 32),
    wordMs: Number(env.MOL_SOAK_WORD_MS ?? 25),
    slots: 64,
  }),
  nodeId,
  maxConcurrent: Number(env.MOL_MAX_CONCURRENT ?? 64),
  heartbeatIntervalMs: Number(env.MOL_HEARTBEAT_INTERVAL_MS ?? 500),
  heartbeatTtlMs: Number(env.MOL_HEARTBEAT_TTL_MS ?? 3000),
  logger: pino({ level: env.MOL_LOG_LEVEL ?? "warn", base: { nodeId } }),
  now: () => performance.now(),
  clock: () => Date.now(),
});
process.stdout.write(`molmesh gpu node ${nodeId} ready (scripted, ${DEFAULT_ADAPTER_IDS.length} adapters)\n`);
process.on("SIGTERM", () => void nc.drain().finally(() => process.exit(0)));
