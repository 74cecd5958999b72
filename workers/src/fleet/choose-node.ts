import type { NodeStatus } from "../../../schema/wire/v1/index.ts";

export type PlacementReason =
  /** The node holds this (conversation, adapter) KV. */
  | "warm"
  /** The warm node is saturated; the hop spilled to the best other node. */
  | "spill"
  /** No warm node: the least-loaded live node with the adapter (ties broken by rendezvous hashing). */
  | "least-loaded"
  /** No fleet information: any node, through the NATS queue group. */
  | "queue-group";

export interface PlacementChoice {
  /** Undefined for the queue-group path. */
  nodeId?: string;
  reason: PlacementReason;
  /** Set when reason is "spill": the warm node that was passed over. */
  spilledFrom?: string;
}

export interface PlacementQuestion {
  nodes: readonly NodeStatus[];
  adapter: string;
  conversationId: string;
  /** The node that last served this (conversation, adapter), from the timeline: warm even if its heartbeat lags. */
  lastNodeId?: string;
  /** Nodes that already failed this hop. */
  exclude?: ReadonlySet<string>;
  /**
   * Features the hop needs (`output:tools`, …): nodes that do not list them are passed over, since a node
   * refuses a constraint it cannot honour rather than answer unconstrained.
   */
  requires?: readonly string[];
}

/**
 * Where a hop goes: the node whose KV for (conversation, adapter) is warm, unless it is saturated; else the less
 * loaded of the conversation's two rendezvous-hashed candidates among live nodes that serve the adapter, a pick
 * that stays stable for the conversation, so its next turn lands where its KV now is even before a heartbeat says so.
 */
export function chooseNode(q: PlacementQuestion): PlacementChoice {
  const candidates = q.nodes.filter(
    (n) =>
      !q.exclude?.has(n.nodeId) &&
      n.adapters.some((a) => a.id === q.adapter) &&
      (q.requires ?? []).every((feature) => n.features.includes(feature)),
  );
  if (candidates.length === 0) return { reason: "queue-group" };
  const warm =
    candidates.find((n) =>
      n.adapters.some((a) => a.id === q.adapter && a.warmConversations.includes(q.conversationId)),
    ) ?? candidates.find((n) => n.nodeId === q.lastNodeId);
  if (warm && !isSaturated(warm, q.adapter)) return { nodeId: warm.nodeId, reason: "warm" };
  const others = candidates.filter((n) => n !== warm);
  const open = others.filter((n) => !isSaturated(n, q.adapter));
  const pool = open.length > 0 ? open : others;
  if (pool.length === 0) return warm ? { nodeId: warm.nodeId, reason: "warm" } : { reason: "queue-group" };
  const best = pickOfTwo(pool, q);
  return warm
    ? { nodeId: best.nodeId, reason: "spill", spilledFrom: warm.nodeId }
    : { nodeId: best.nodeId, reason: "least-loaded" };
}

/** A node past its concurrency limit, or with no free slot for the adapter and hops already waiting. */
export function isSaturated(node: NodeStatus, adapter: string): boolean {
  const slots = node.adapters.find((a) => a.id === adapter);
  return (
    node.inFlight >= node.maxConcurrent ||
    (slots !== undefined && slots.freeSlots === 0 && node.queueDepth > 0)
  );
}

/**
 * Power of two choices over rendezvous hashing: the conversation's two highest-scoring nodes, then the one holding
 * fewer conversations for this adapter (and less work in flight). Heartbeats lag, so a plain "least loaded" would
 * send every new conversation of the next second to the same node; two hashed candidates per conversation spread
 * them while keeping the pick stable for that conversation.
 */
function pickOfTwo(pool: readonly NodeStatus[], q: PlacementQuestion): NodeStatus {
  const ranked = [...pool].sort((a, b) => rendezvousScore(b.nodeId, q) - rendezvousScore(a.nodeId, q));
  const [first, second] = ranked as [NodeStatus, NodeStatus | undefined];
  if (!second) return first;
  return loadOf(second, q.adapter) < loadOf(first, q.adapter) ? second : first;
}

/** Conversations held for this adapter plus hops in flight or waiting, relative to the node's capacity. */
function loadOf(node: NodeStatus, adapter: string): number {
  const held = node.adapters.find((a) => a.id === adapter)?.warmConversations.length ?? 0;
  return held + (node.inFlight + node.queueDepth) / node.maxConcurrent;
}

/** Highest-random-weight hashing: a stable, even spread of keys over nodes, stable as nodes come and go. */
function rendezvousScore(nodeId: string, q: PlacementQuestion): number {
  let hash = 2166136261;
  for (const char of `${nodeId}|${q.conversationId}|${q.adapter}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash;
}
