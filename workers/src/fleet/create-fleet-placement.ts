import type { NatsConnection } from "@nats-io/nats-core";
import { FleetView, type HopPlacement } from "./fleet-view.ts";
import { PlacementLedger } from "./placement-ledger.ts";
import { watchFleet } from "./watch-fleet.ts";

/** How often to retry watching the heartbeat bucket when it does not exist yet. */
const WATCH_RETRY_MS = 2_000;

/** How long a node stays in this edge's fleet without a heartbeat (the bucket's TTL also removes it). */
export const DEFAULT_FLEET_STALE_MS = 10_000;

/** Shared by every conversation object of this isolate: each sees the others' placements between heartbeats. */
const isolateLedger = new PlacementLedger(() => Date.now());

/**
 * Placement input for one edge object: a FleetView fed by a watch on the heartbeat bucket, (re)started on
 * whatever connection is current, so a reconnect or a new connection keeps the view live.
 */
export function createFleetPlacement(options: {
  connection: () => Promise<NatsConnection>;
  staleAfterMs?: number;
  now: () => number;
  /**
   * "queue-group" lets NATS pick a node at random for every hop (the benchmark's baseline); the fleet is still
   * watched for what its nodes serve, or the baseline would render other views (the default harness's).
   */
  mode?: "affinity" | "queue-group";
  /** Default: the isolate's ledger (tests pass their own, on their clock). */
  ledger?: PlacementLedger;
}): HopPlacement {
  const ledger = options.ledger ?? isolateLedger;
  const fleet = new FleetView({
    now: options.now,
    staleAfterMs: options.staleAfterMs ?? DEFAULT_FLEET_STALE_MS,
    firstSeen: (nodeId, revision) => ledger.firstSeenBeat(nodeId, revision),
  });
  let watching: { nc: NatsConnection; stop: () => void } | undefined;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  return {
    picksNodes: options.mode !== "queue-group",
    async nodes() {
      const nc = await options.connection();
      // Retry a failed watch (no bucket before the first node starts) now and then, not on every hop.
      if (watching?.nc !== nc && options.now() - lastAttempt >= WATCH_RETRY_MS) {
        lastAttempt = options.now();
        watching?.stop();
        const stop = await watchFleet(nc, fleet);
        watching = stop ? { nc, stop } : undefined;
      }
      return fleet.nodes();
    },
    recentHops: () => ledger.recentHops((nodeId) => fleet.seenAt(nodeId)),
    heldTokens: (conversationId, adapter, hop) => ledger.heldTokens(conversationId, adapter, hop),
    notePlacement: (hop) => ledger.record(hop),
  };
}
