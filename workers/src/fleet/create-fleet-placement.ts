import type { NatsConnection } from "@nats-io/nats-core";
import { FleetView } from "./fleet-view.ts";
import { placeOverFleet, type HopPlacement } from "./hop-placement.ts";
import { PlacementLedger } from "./placement-ledger.ts";
import { watchFleet } from "./watch-fleet.ts";

/** How often to retry watching the heartbeat bucket when it does not exist yet. */
const WATCH_RETRY_MS = 2_000;

/**
 * The placement of one colo: a FleetView fed by one watch on the heartbeat bucket, (re)started on whatever
 * connection is current, so a reconnect or a new connection keeps the view live, and the ledger of the hops placed
 * since each node's last beat. The colo's fleet object holds the only one; its conversation objects ask it.
 */
export function createFleetPlacement(options: {
  connection: () => Promise<NatsConnection>;
  /** How long a node stays in the fleet without a heartbeat (MOL_FLEET_STALE_MS; the bucket's TTL also drops it). */
  staleAfterMs: number;
  now: () => number;
  /** Default: a ledger of its own on `now`. */
  ledger?: PlacementLedger;
}): HopPlacement & { watching(): boolean } {
  const ledger = options.ledger ?? new PlacementLedger(options.now);
  const fleet = new FleetView({
    now: options.now,
    staleAfterMs: options.staleAfterMs,
    firstSeen: (nodeId, revision) => ledger.firstSeenBeat(nodeId, revision),
  });
  let watching: { nc: NatsConnection; stop: () => void } | undefined;
  /** The watch being started: hops that arrive meanwhile wait for its first beats instead of finding no node. */
  let starting: Promise<void> | undefined;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  const nodes = async () => {
    const nc = await options.connection();
    // Retry a failed watch (no bucket before the first node starts) now and then, not on every hop.
    if (!starting && watching?.nc !== nc && options.now() - lastAttempt >= WATCH_RETRY_MS) {
      lastAttempt = options.now();
      watching?.stop();
      watching = undefined;
      starting = watchFleet(nc, fleet)
        .then((stop) => {
          watching = stop ? { nc, stop } : undefined;
        })
        .finally(() => (starting = undefined));
    }
    await starting;
    return fleet.nodes();
  };
  return {
    ...placeOverFleet({ nodes, seenAt: (nodeId) => fleet.seenAt(nodeId), ledger }),
    watching: () => watching !== undefined && !watching.nc.isClosed(),
  };
}
