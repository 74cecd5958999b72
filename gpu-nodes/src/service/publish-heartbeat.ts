import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm, type KV } from "@nats-io/kv";
import {
  NODE_STATUS_BUCKET,
  buildNodeStatusKey,
  encodeWireMessage,
  type NodeStatus,
  type WireVersion,
} from "../../../schema/wire/v2/index.ts";
import type { NodeLogger } from "./serve-generate.ts";

export interface HeartbeatOptions {
  nc: NatsConnection;
  nodeId: string;
  describe: () => NodeStatus & { version: WireVersion };
  intervalMs: number;
  /** Age after which the bucket drops a node's entry: a node that stops beating leaves the fleet by then. */
  ttlMs: number;
  logger: NodeLogger;
}

export interface Heartbeat {
  /** Publishes a beat now (e.g. right after a change the edge should see soon). */
  beat(): Promise<void>;
  /** Stops beating and removes this node's entry, so the edge drops it at once rather than after the TTL. */
  stop(): Promise<void>;
}

/** Opens the status bucket (creating it with the TTL when it does not exist yet). */
export async function openStatusBucket(nc: NatsConnection, ttlMs: number): Promise<KV> {
  const kvm = new Kvm(nc);
  return await kvm.create(NODE_STATUS_BUCKET, { ttl: ttlMs, history: 1 });
}

/** Writes this node's status into the JetStream KV bucket every `intervalMs`. */
export async function startHeartbeat(options: HeartbeatOptions): Promise<Heartbeat> {
  const kv = await openStatusBucket(options.nc, options.ttlMs);
  const key = buildNodeStatusKey(options.nodeId);
  let stopped = false;
  const beat = async (): Promise<void> => {
    if (stopped) return;
    try {
      await kv.put(key, encodeWireMessage(options.describe()));
    } catch (error) {
      // A missed beat is survivable (the TTL is several intervals); a node that never beats leaves the fleet.
      options.logger.warn({ err: error }, "heartbeat failed");
    }
  };
  await beat();
  const timer = setInterval(() => void beat(), options.intervalMs);
  return {
    beat,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await kv.delete(key).catch(() => undefined);
    },
  };
}
