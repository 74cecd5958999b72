import type { NatsConnection } from "@nats-io/nats-core";
import type { Tracer } from "@opentelemetry/api";
import type { Engine } from "../engine/engine.ts";
import { Admission, DEFAULT_QUEUED_PER_SLOT } from "./admission.ts";
import { describeNodeStatus } from "./describe-node-status.ts";
import { InFlightRequests } from "./in-flight-requests.ts";
import { NodeLoadMeter } from "./node-load.ts";
import { NodeMetrics, startMetricsServer, type MetricsServer } from "./node-metrics.ts";
import { startHeartbeat } from "./publish-heartbeat.ts";
import { serveHops, type NodeLogger } from "./serve-generate.ts";

/** Most hops a node runs at once; the rest wait in its fair queue. */
export const DEFAULT_MAX_CONCURRENT_HOPS = 8;
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 2_000;
export const DEFAULT_HEARTBEAT_TTL_MS = 10_000;
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export interface GpuNodeOptions {
  nc: NatsConnection;
  engine: Engine;
  nodeId: string;
  maxConcurrent?: number;
  /** Summary hops that run at once in their own admission lane; unset: they share `maxConcurrent`. */
  maxConcurrentSummaries?: number | undefined;
  /** Hops that may wait for admission (all tenants); past it `overloaded`. Default 16 × maxConcurrent. */
  maxQueued?: number | undefined;
  heartbeatIntervalMs?: number;
  heartbeatTtlMs?: number;
  subjectPrefix?: string;
  logger: NodeLogger;
  /** Monotonic milliseconds, for durations. */
  now: () => number;
  /** Wall clock (unix ms), for heartbeat timestamps. */
  clock: () => number;
  /** Serve Prometheus text on this port (`GET /metrics`); 0 or undefined serves none. */
  metricsPort?: number;
  /** Interface the metrics server listens on; default 127.0.0.1. */
  metricsHost?: string;
  /** Hop spans go here; default: the globally registered provider's tracer. */
  tracer?: Tracer;
}

export interface GpuNode {
  readonly nodeId: string;
  readonly metrics: NodeMetrics;
  /** Where Prometheus scrapes this node, when a metrics port was given. */
  readonly metricsUrl: string | undefined;
  /** Drains hops (up to `graceMs`), removes the heartbeat and closes the engine; the NATS connection is the caller's. */
  stop(graceMs?: number): Promise<void>;
}

/** Wires the node service around an injected engine and NATS connection. */
export async function startGpuNode(options: GpuNodeOptions): Promise<GpuNode> {
  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_HOPS;
  const admission = new Admission({
    maxConcurrent,
    maxConcurrentSummaries: options.maxConcurrentSummaries,
    maxQueued: options.maxQueued ?? DEFAULT_QUEUED_PER_SLOT * maxConcurrent,
    now: options.now,
    onWaitBehindSummaries: () => options.engine.hurrySummaries?.(),
  });
  const inFlight = new InFlightRequests();
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const startedAt = options.clock();
  const metrics = new NodeMetrics({ engine: options.engine, admission, nodeId: options.nodeId });
  const metricsServer: MetricsServer | undefined = options.metricsPort
    ? await startMetricsServer(metrics.registry, options.metricsPort, options.metricsHost ?? "127.0.0.1")
    : undefined;
  const load = new NodeLoadMeter();
  const server = serveHops({ ...options, admission, inFlight, metrics, load });
  const heartbeat = await startHeartbeat({
    nc: options.nc,
    nodeId: options.nodeId,
    intervalMs: heartbeatIntervalMs,
    ttlMs: options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS,
    logger: options.logger,
    describe: () => describeNodeStatus({ ...options, admission, load, startedAt, heartbeatIntervalMs }),
  }).catch(async (error: unknown) => {
    await server.stop(0);
    await metricsServer?.close();
    throw error;
  });
  options.logger.info(
    { engine: options.engine.kind, servedModel: options.engine.servedModel, metricsUrl: metricsServer?.url },
    "gpu node serving",
  );
  const formatWarning = options.engine.servedModel?.warning;
  if (formatWarning) options.logger.warn({ servedModel: options.engine.servedModel }, formatWarning);
  let stopped: Promise<void> | undefined;
  return {
    nodeId: options.nodeId,
    metrics,
    metricsUrl: metricsServer?.url,
    stop(graceMs = DEFAULT_SHUTDOWN_GRACE_MS) {
      stopped ??= (async () => {
        await server.stop(graceMs);
        await heartbeat.stop();
        await options.engine.close();
        await metricsServer?.close();
      })();
      return stopped;
    },
  };
}
