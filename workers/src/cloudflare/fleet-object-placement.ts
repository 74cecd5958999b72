import type { NodeStatus } from "../../../schema/wire/v2/index.ts";
import type { HopPlacement } from "../fleet/hop-placement.ts";
import type { FleetObject } from "./fleet-object.ts";

/**
 * A conversation object's placement: its colo's fleet object decides (one heartbeat watch and one ledger for the
 * colo), and is told when each placed hop ends. The node list, which the conversation reads for the served model's
 * chat format and context, is kept for `cacheMs`; placement itself is asked on every hop attempt, so hops placed
 * by the colo's other conversations count at once.
 */
export function placeThroughFleetObject(options: {
  fleet: () => DurableObjectStub<FleetObject>;
  /** How long a node list read from the fleet object is reused. */
  cacheMs: number;
  now: () => number;
  /** False: the queue-group baseline (placement still reads the fleet for the served model). */
  picksNodes: boolean;
}): HopPlacement {
  let cached: { at: number; nodes: Promise<NodeStatus[]> } | undefined;
  return {
    ...(options.picksNodes ? {} : { picksNodes: false }),
    nodes() {
      const now = options.now();
      if (!cached || now - cached.at >= options.cacheMs) {
        const nodes = options.fleet().nodes();
        cached = { at: now, nodes };
        // A failed read is not kept: the next call asks again.
        nodes.catch(() => {
          if (cached?.nodes === nodes) cached = undefined;
        });
      }
      return cached.nodes;
    },
    async place(request) {
      const fleet = options.fleet();
      const { ticket, ...choice } = await fleet.place(request);
      return {
        ...choice,
        settle: (heldTokens) => {
          if (ticket === undefined) return;
          // Off the hop's path: a lost settle only leaves the hop counted as load until the ledger's window ends.
          fleet.settle(ticket, heldTokens).catch(() => undefined);
        },
      };
    },
  };
}
