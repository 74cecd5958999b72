import type { NodeStatus } from "../../../schema/wire/v2/index.ts";

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
