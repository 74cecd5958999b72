import { availableParallelism, hostname } from "node:os";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { readFile } from "node:fs/promises";
import { pino } from "pino";
import {
  ConfigError,
  defaultRouteThreadCount,
  defaultThreadCount,
  parseNodeConfig,
} from "./config/node-config.ts";
import { createEngineFromConfig } from "./runtime/create-engine-from-config.ts";
import { startGpuNode } from "./service/start-gpu-node.ts";
import { startNodeTracing } from "./runtime/start-node-tracing.ts";

/** Composition root of a GPU node: configuration → engine → NATS → node service. */
async function main(): Promise<void> {
  let config;
  try {
    config = parseNodeConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const { env } = config;
  const nodeId =
    env.MOL_NODE_ID ??
    `${hostname()
      .replace(/[^A-Za-z0-9_-]/g, "-")
      .slice(0, 40)}-${process.pid}`;
  const logger = pino({ level: env.MOL_LOG_LEVEL, base: { nodeId } });
  const tracing = startNodeTracing(process.env, nodeId);
  if (tracing) logger.info({ endpoint: tracing.endpoint }, "exporting traces over OTLP/HTTP");
  // llama.cpp's own default thread count is far slower on small machines; never leave it implicit.
  const threads = env.MOL_THREADS ?? defaultThreadCount(availableParallelism());
  const routeThreads = env.MOL_ROUTE_THREADS ?? defaultRouteThreadCount(availableParallelism());

  logger.info(
    { engine: env.MOL_ENGINE, model: env.MOL_BASE_MODEL ?? env.MOL_ENGINE_URL, threads, routeThreads },
    "loading engine",
  );
  const engine = await createEngineFromConfig(config, threads, routeThreads, (message) =>
    logger.warn(message),
  );
  const nc = await connect({
    servers: env.MOL_NATS_URL.split(","),
    name: `molmesh-gpu-node-${nodeId}`,
    maxReconnectAttempts: -1,
    ...(env.MOL_NATS_CREDS ? { authenticator: credsAuthenticator(await readFile(env.MOL_NATS_CREDS)) } : {}),
  });
  const node = await startGpuNode({
    nc,
    engine,
    nodeId,
    maxConcurrent: env.MOL_MAX_CONCURRENT,
    maxConcurrentSummaries: env.MOL_MAX_CONCURRENT_SUMMARIES,
    maxQueued: env.MOL_MAX_QUEUED,
    heartbeatIntervalMs: env.MOL_HEARTBEAT_INTERVAL_MS,
    heartbeatTtlMs: env.MOL_HEARTBEAT_TTL_MS,
    subjectPrefix: env.MOL_SUBJECT_PREFIX,
    logger,
    now: () => performance.now(),
    clock: () => Date.now(),
    metricsPort: env.MOL_METRICS_PORT,
    metricsHost: env.MOL_METRICS_HOST,
  });
  process.stdout.write(
    `molmesh gpu node ${nodeId} ready (${engine.kind}, ${engine.adapters().length} adapters)\n`,
  );
  if (node.metricsUrl) process.stdout.write(`molmesh gpu node ${nodeId} metrics ${node.metricsUrl}\n`);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    await node.stop();
    await tracing?.shutdown().catch(() => undefined);
    await nc.drain().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  void nc.closed().then((error) => {
    if (!stopping) {
      logger.error({ err: error }, "NATS connection closed");
      process.exit(1);
    }
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `molmesh gpu node failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
