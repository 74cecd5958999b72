import type { NodeStatus, PriorityClass } from "../../../schema/wire/v2/index.ts";
import type { PlacedHop } from "./placement-ledger.ts";

/**
 * The live fleet as one edge object sees it, fed by the heartbeat bucket. An entry also expires here when no
 * beat arrived for `staleAfterMs` (the bucket's own TTL removes it eventually; this bounds the wait on our side).
 */
export class FleetView {
  readonly #nodes = new Map<string, { status: NodeStatus; seenAt: number }>();
  readonly #now: () => number;
  readonly #staleAfterMs: number;
  readonly #firstSeen: (nodeId: string, revision: number) => number;

  constructor(options: {
    now: () => number;
    staleAfterMs: number;
    /** When a beat (bucket revision) was first seen here or by another object sharing the ledger. */
    firstSeen: (nodeId: string, revision: number) => number;
  }) {
    this.#now = options.now;
    this.#staleAfterMs = options.staleAfterMs;
    this.#firstSeen = options.firstSeen;
  }

  /** A node's beat; `revision` (the bucket's) lets a beat seen before by another object keep its first time. */
  update(status: NodeStatus, revision: number): void {
    this.#nodes.set(status.nodeId, { status, seenAt: this.#firstSeen(status.nodeId, revision) });
  }

  remove(nodeId: string): void {
    this.#nodes.delete(nodeId);
  }

  /** When this edge last heard from the node (its clock), if it did. */
  seenAt(nodeId: string): number | undefined {
    return this.#nodes.get(nodeId)?.seenAt;
  }

  /** Live nodes, in node-id order (deterministic placement for equal inputs). */
  nodes(): NodeStatus[] {
    const now = this.#now();
    return [...this.#nodes.values()]
      .filter((entry) => now - entry.seenAt <= this.#staleAfterMs)
      .map((entry) => entry.status)
      .sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }
}

/** What `/healthz` reports about NATS and the fleet. */
export interface FleetHealth {
  nats: "ok" | "unreachable";
  liveNodes: number;
  nodes: NodeStatus[];
  detail?: string;
}

/** Where hops go: what the turn loop asks of the fleet before each hop. */
export interface HopPlacement {
  /** The live fleet as this edge object sees it. */
  nodes(): Promise<readonly NodeStatus[]>;
  /**
   * False for the queue-group baseline: every hop goes to the node NATS picks, while the fleet is still read for
   * what the nodes serve (chat format, context), so both placements render the same views. Default true.
   */
  picksNodes?: boolean;
  /** Hops placed on each node since its last heartbeat (see PlacementLedger); absent: none counted. */
  recentHops?(): ReadonlyMap<string, number>;
  /** What the warm node of (conversation, adapter) holds in tokens: its last hop's prompt and generated text. */
  heldTokens?(conversationId: string, adapter: string, hop: PriorityClass): number | undefined;
  /**
   * Told of each hop as it is sent to a node, before the node's next heartbeat can show it; the function it
   * returns is called when that hop ends (answered or failed), so only hops still running count as load, with
   * what the node then holds of the pair when the hop answered.
   */
  notePlacement?(hop: PlacedHop): (heldTokens?: number) => void;
}
