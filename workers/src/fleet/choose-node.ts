import {
  WIRE_VERSION,
  adapterNameMatches,
  readAdapterName,
  readWireVersions,
  type AdapterStatus,
  type NodeLoad,
  type NodeStatus,
} from "../../../schema/wire/v2/index.ts";

export type PlacementReason =
  /** The node holds this (conversation, adapter) KV. */
  | "warm"
  /** The warm node is saturated, or its queue would make the hop wait longer than a cold prefill elsewhere. */
  | "spill"
  /** No warm node: the live node with the adapter that answers soonest (ties broken by rendezvous hashing). */
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
  /** The hop's prompt in tokens (an estimate will do); unknown: {@link TYPICAL_PROMPT_TOKENS}. */
  promptTokens?: number;
  /**
   * How much of the prompt the warm node holds: views only grow at their end, so its KV is the previous prompt
   * of the pair. Unknown: all but {@link TYPICAL_NEW_TOKENS}.
   */
  warmTokens?: number;
  /** Hops this edge placed on each node since that node's last heartbeat: work its beat does not show yet. */
  recentHops?: ReadonlyMap<string, number>;
}

/** Prompt size assumed when the caller does not say: a view a few turns into a conversation. */
export const TYPICAL_PROMPT_TOKENS = 1024;
/** What a warm node is assumed to lack of the prompt when the caller does not say: the newest turn. */
export const TYPICAL_NEW_TOKENS = 64;
/** Load figures when no node of the fleet reports any (earlier builds, or none has timed a prefill yet). */
export const DEFAULT_NODE_LOAD: NodeLoad = { prefillTokensPerSecond: 500, hopMs: 1_000 };
/**
 * Estimates this close to the best count as equal. Heartbeats are a few hundred ms old and rates are running
 * means, so a smaller difference is noise; within it the conversation's stable rendezvous pick (or the warm
 * node, whose KV also serves the next turn) is worth more than the difference.
 */
export const ESTIMATE_TOLERANCE = 0.1;

/**
 * A filter: whether a node may take the hop at all. Liveness is the fleet view's (a node without a beat for the stale
 * time is not in `q.nodes`); these are the rest, each one reason a live node is passed over.
 */
export type PlacementFilter = (node: NodeStatus, q: PlacementQuestion) => boolean;

export const PLACEMENT_FILTERS: Readonly<Record<string, PlacementFilter>> = {
  /** A node that already failed this hop gets no second try of it. */
  notFailed: (node, q) => !q.exclude?.has(node.nodeId),
  /** It speaks this edge's wire version (a fleet upgrades node by node). */
  speaksWireVersion: (node) => readWireVersions(node).includes(WIRE_VERSION),
  /** It holds the adapter, or the exact revision a versioned name asks for. */
  servesAdapter: (node, q) => node.adapters.some((a) => servesAdapter(a, q.adapter)),
  /** It lists every feature the hop needs: a node refuses a constraint it cannot honour. */
  hasFeatures: (node, q) => (q.requires ?? []).every((feature) => node.features.includes(feature)),
};

/** What the scorers say of one candidate node. */
export interface ScoredNode {
  node: NodeStatus;
  /** It holds this (conversation, adapter) KV (its beat says so, or the timeline's last hop of the pair ran there). */
  warm: boolean;
  /** Estimated time to first token, ms: queue and load, and only the uncached prompt on the warm node. */
  firstTokenMs: number;
  /** Past its concurrency, or out of slots for the adapter with hops waiting. */
  saturated: boolean;
  /** Conversations it holds for this adapter plus its work relative to capacity (the tie-break of two). */
  adapterLoad: number;
  /** Rendezvous hash of (node, conversation, adapter): a stable per-conversation order of the nodes. */
  rendezvous: number;
}

/**
 * Where a hop goes, in the endpoint-picker shape: {@link filterNodes} keeps the nodes that can take it,
 * {@link scoreNodes} scores them, {@link pickScored} picks one. With no candidate the hop goes to the queue group.
 */
export function chooseNode(q: PlacementQuestion): PlacementChoice {
  const candidates = filterNodes(q);
  if (candidates.length === 0) return { reason: "queue-group" };
  return pickScored(scoreNodes(candidates, q));
}

/** The nodes every filter keeps, in the fleet's order. */
export function filterNodes(
  q: PlacementQuestion,
  filters: readonly PlacementFilter[] = Object.values(PLACEMENT_FILTERS),
): NodeStatus[] {
  return q.nodes.filter((node) => filters.every((keep) => keep(node, q)));
}

/** Scores each candidate for this question (see {@link ScoredNode}). */
export function scoreNodes(candidates: readonly NodeStatus[], q: PlacementQuestion): ScoredNode[] {
  const warm = findWarmNode(candidates, q);
  return candidates.map((node) => ({
    node,
    warm: node === warm,
    firstTokenMs: estimateFor(node, node === warm, q),
    saturated: isSaturated(node, q.adapter, q.recentHops?.get(node.nodeId) ?? 0),
    adapterLoad: loadOf(node, q.adapter),
    rendezvous: rendezvousScore(node.nodeId, q),
  }));
}

/**
 * The picker: the least estimated time to first token wins, where the warm node's estimate counts only the tokens
 * its KV lacks and any other node's counts the whole prompt. Saturated nodes are passed over while any other can
 * take the hop. Among nodes within {@link ESTIMATE_TOLERANCE} of the best, the warm node wins, else the less loaded
 * of the conversation's two rendezvous-hashed candidates: a pick that stays stable for the conversation, so its
 * next turn lands where its KV now is even before a heartbeat says so.
 */
export function pickScored(scored: readonly ScoredNode[]): PlacementChoice {
  const open = scored.filter((s) => !s.saturated);
  // All saturated: the estimates, which count the queue ahead, still say where the wait is shortest.
  const pool = open.length > 0 ? open : scored;
  const best = Math.min(...pool.map((s) => s.firstTokenMs));
  const near = pool.filter((s) => s.firstTokenMs <= best * (1 + ESTIMATE_TOLERANCE));
  const warm = scored.find((s) => s.warm);
  if (warm && near.includes(warm)) return { nodeId: warm.node.nodeId, reason: "warm" };
  const pick = pickOfTwo(near);
  return warm
    ? { nodeId: pick.node.nodeId, reason: "spill", spilledFrom: warm.node.nodeId }
    : { nodeId: pick.node.nodeId, reason: "least-loaded" };
}

/** Whether a beat's adapter entry serves requests for `adapter` (a label, or a versioned name). */
export function servesAdapter(entry: AdapterStatus, adapter: string): boolean {
  return adapterNameMatches(adapter, readAdapterName(entry));
}

/** The node whose heartbeat lists the (conversation, adapter) KV, else the one the timeline says served it last. */
function findWarmNode(candidates: readonly NodeStatus[], q: PlacementQuestion): NodeStatus | undefined {
  return (
    candidates.find((n) =>
      n.adapters.some((a) => servesAdapter(a, q.adapter) && a.warmConversations.includes(q.conversationId)),
    ) ?? candidates.find((n) => n.nodeId === q.lastNodeId)
  );
}

/** The estimate for one candidate of this question: the warm node prefills only what its KV lacks. */
export function estimateFor(node: NodeStatus, isWarm: boolean, q: PlacementQuestion): number {
  const prompt = Math.max(1, q.promptTokens ?? TYPICAL_PROMPT_TOKENS);
  // The last prompt token is always evaluated, whatever the cache holds.
  const held = Math.min(prompt - 1, Math.max(0, q.warmTokens ?? prompt - TYPICAL_NEW_TOKENS));
  const uncached = isWarm ? prompt - held : prompt;
  return estimateWithLoad(node, uncached, q.recentHops?.get(node.nodeId) ?? 0, fleetLoad(q.nodes));
}

/**
 * The rate and hop time placement compares nodes at: the median of what the fleet reports, the same for every
 * node. A fleet serves one base model on like machines, so the rates nodes report differ by measurement noise
 * (a handful of hops, timed on a shared machine: they swung 3x between identical nodes here), while how busy a
 * node is shows in its queue, which the estimate counts. Ranking by each node's own noisy rate sent warm
 * conversations to a node that had merely timed a lucky prefill, or had timed none yet. A node without `load`
 * is then ranked like its peers, so it gets the hops that measure it.
 */
export function fleetLoad(nodes: readonly NodeStatus[]): NodeLoad {
  const loads = nodes.flatMap((n) => (n.load ? [n.load] : []));
  if (loads.length === 0) return DEFAULT_NODE_LOAD;
  return {
    prefillTokensPerSecond: median(loads.map((l) => l.prefillTokensPerSecond)),
    hopMs: median(loads.map((l) => l.hopMs)),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Time to first token of a hop that must evaluate `uncachedTokens` on `node`, ms: the wait for admission behind
 * the hops already queued there, then its prefill at the node's rate, shared with the hops running beside it (on
 * one CPU or GPU, k other sequences leave a new one about 1/(k+1) of the engine). `recentHops` are hops placed
 * there since its heartbeat, counted as waiting like the ones it reports; `fallback` stands in for a missing `load`.
 */
export function estimateFirstTokenMs(
  node: NodeStatus,
  uncachedTokens: number,
  recentHops = 0,
  fallback: NodeLoad = DEFAULT_NODE_LOAD,
): number {
  return estimateWithLoad(node, uncachedTokens, recentHops, node.load ?? fallback);
}

function estimateWithLoad(
  node: NodeStatus,
  uncachedTokens: number,
  recentHops: number,
  load: NodeLoad,
): number {
  const ahead = node.inFlight + node.queueDepth + recentHops;
  const queued = Math.max(0, ahead - node.maxConcurrent + 1);
  const admissionMs = (queued / node.maxConcurrent) * load.hopMs;
  const sharing = 1 + Math.min(ahead, node.maxConcurrent - 1);
  const prefillMs = ((Math.max(1, uncachedTokens) * 1000) / load.prefillTokensPerSecond) * sharing;
  return admissionMs + prefillMs;
}

/** A node past its concurrency limit, or with no free slot for the adapter and hops already waiting. */
export function isSaturated(node: NodeStatus, adapter: string, recentHops = 0): boolean {
  const slots = node.adapters.find((a) => servesAdapter(a, adapter));
  return (
    node.inFlight + recentHops >= node.maxConcurrent ||
    (slots !== undefined && slots.freeSlots === 0 && node.queueDepth > 0)
  );
}

/**
 * Power of two choices over rendezvous hashing: the conversation's two highest-scoring nodes, then the one holding
 * fewer conversations for this adapter (and less work in flight). Heartbeats lag, so a plain "least loaded" would
 * send every new conversation of the next second to the same node; two hashed candidates per conversation spread
 * them while keeping the pick stable for that conversation.
 */
function pickOfTwo(pool: readonly ScoredNode[]): ScoredNode {
  const ranked = [...pool].sort((a, b) => b.rendezvous - a.rendezvous);
  const [first, second] = ranked as [ScoredNode, ScoredNode | undefined];
  if (!second) return first;
  return second.adapterLoad < first.adapterLoad ? second : first;
}

/** Conversations held for this adapter plus hops in flight or waiting, relative to the node's capacity. */
function loadOf(node: NodeStatus, adapter: string): number {
  const held = node.adapters.find((a) => servesAdapter(a, adapter))?.warmConversations.length ?? 0;
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
