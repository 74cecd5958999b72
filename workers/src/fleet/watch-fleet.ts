import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import { NODE_STATUS_BUCKET, decodeWireMessage, nodeStatusSchema } from "../../../schema/wire/v2/index.ts";
import type { FleetView } from "./fleet-view.ts";

/**
 * Keeps a FleetView current from the heartbeat bucket: the watch delivers every node's latest beat, then each new
 * one, and a delete or TTL purge when a node leaves. Resolves once the initial state is loaded; returns a stop.
 */
export async function watchFleet(nc: NatsConnection, fleet: FleetView): Promise<(() => void) | undefined> {
  let watcher;
  try {
    const kv = await new Kvm(nc).open(NODE_STATUS_BUCKET);
    watcher = await kv.watch({ key: "node.*" });
  } catch {
    return undefined; // no node ever started, so no bucket yet: hops take the queue group meanwhile
  }
  let initialDone: () => void = () => undefined;
  const initial = new Promise<void>((resolve) => (initialDone = resolve));
  void (async () => {
    for await (const entry of watcher) {
      const nodeId = entry.key.slice("node.".length);
      if (entry.operation === "PUT") {
        try {
          fleet.update(
            decodeWireMessage(nodeStatusSchema, entry.value, "reply", { anyVersion: true }),
            entry.revision,
          );
        } catch {
          // A node on another wire version is not part of this edge's fleet.
        }
      } else fleet.remove(nodeId);
      if (entry.delta === 0) initialDone();
    }
  })();
  await Promise.race([initial, new Promise((r) => setTimeout(r, 500))]);
  return () => watcher.stop();
}
