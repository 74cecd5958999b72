import { isLatencyClass, type PriorityClass } from "../../../schema/wire/v2/index.ts";

/** Past this a placement no longer counts as unseen work, heartbeat or not (a node beats every few seconds). */
export const RECENT_HOP_WINDOW_MS = 5_000;
/** Pairs whose last prompt size is remembered; the oldest is forgotten past it. */
const MAX_REMEMBERED_PAIRS = 10_000;
/** Beats per node whose first sighting is remembered: a watcher lagging further behind than this is rare. */
const REMEMBERED_BEATS_PER_NODE = 8;

export interface PlacedHop {
  nodeId: string;
  /** Summaries run on slots of their own, so their KV is remembered apart from the views'. */
  hop: PriorityClass;
  /** The placement key (conversation id, or a stateless turn's cache key). */
  conversationId: string;
  adapter: string;
  promptTokens: number;
}

/**
 * What this edge placed lately, for the placements that follow before the next heartbeat. A beat is up to an
 * interval old, so a burst of turns would otherwise all see the same idle node and all go there; counting our
 * own placements since that node's last beat spreads them (an optimistic increment, corrected by the next beat).
 * A hop counts only until it settles: a finished hop is no longer work on that node, and counting it would make
 * the warm node of a conversation look busy with its own last turn and send the next turn elsewhere.
 * It also remembers, per (conversation, adapter) (a summary's apart), what the warm node's KV now holds: the last
 * hop's prompt, and once that hop answered, the text it generated too, since the engine keeps a sequence's generated
 * tokens and the next view repeats them (views only grow at their end). Counting the prompt alone made a warm
 * node after a long answer look as if it lacked that whole answer: with a summary running beside it, its estimate
 * passed a cold node's and the next turn spilled, throwing away the KV.
 *
 * One per isolate (see createFleetPlacement): conversation objects that share an isolate see each other's
 * placements; across isolates only heartbeats carry load, as before.
 */
export class PlacementLedger {
  readonly #now: () => number;
  readonly #placedAt = new Map<string, Placement[]>();
  readonly #heldTokens = new Map<string, { tokens: number }>();
  readonly #beatsSeen = new Map<string, Map<number, number>>();

  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Records a hop sent to a node; the returned function settles it (call it when the hop ends, however), with
   * `heldTokens` when the hop answered: what the node's KV then holds of the pair, in the prompt's estimate units.
   */
  record(hop: PlacedHop): (heldTokens?: number) => void {
    const now = this.#now();
    const placements = (this.#placedAt.get(hop.nodeId) ?? []).filter(
      (p) => !p.settled && now - p.at <= RECENT_HOP_WINDOW_MS,
    );
    const placement: Placement = { at: now, settled: false };
    placements.push(placement);
    this.#placedAt.set(hop.nodeId, placements);
    const pair = pairKey(hop.conversationId, hop.adapter, hop.hop);
    const held = { tokens: hop.promptTokens };
    this.#heldTokens.delete(pair);
    this.#heldTokens.set(pair, held);
    if (this.#heldTokens.size > MAX_REMEMBERED_PAIRS) {
      const oldest = this.#heldTokens.keys().next();
      if (oldest.done !== true) this.#heldTokens.delete(oldest.value);
    }
    return (heldTokens) => {
      placement.settled = true;
      // Only this hop's own entry: a later hop of the pair has replaced it with its own prompt.
      if (heldTokens !== undefined) held.tokens = Math.max(held.tokens, heldTokens);
    };
  }

  /** Hops placed on each node after `seenAt(node)`, its last heartbeat as this edge saw it, and not yet settled. */
  recentHops(seenAt: (nodeId: string) => number | undefined): Map<string, number> {
    const now = this.#now();
    const counts = new Map<string, number>();
    for (const [nodeId, placements] of this.#placedAt) {
      const since = seenAt(nodeId) ?? Number.NEGATIVE_INFINITY;
      const count = placements.filter(
        (p) => !p.settled && p.at > since && now - p.at <= RECENT_HOP_WINDOW_MS,
      ).length;
      if (count > 0) counts.set(nodeId, count);
    }
    return counts;
  }

  /**
   * When this isolate first saw beat `revision` of `nodeId` (its heartbeat bucket revision). Placements count as
   * unseen work from there: each conversation object watches the bucket itself, and a watch that starts later is
   * handed the same latest beat again. Timed at that second delivery, the beat would seem to cover the hops other
   * objects placed since it was first seen, which it cannot show, and a burst of new conversations went to one node.
   */
  firstSeenBeat(nodeId: string, revision: number): number {
    let beats = this.#beatsSeen.get(nodeId);
    if (!beats) this.#beatsSeen.set(nodeId, (beats = new Map<number, number>()));
    const seen = beats.get(revision);
    if (seen !== undefined) return seen;
    const now = this.#now();
    beats.set(revision, now);
    if (beats.size > REMEMBERED_BEATS_PER_NODE) beats.delete(Math.min(...beats.keys()));
    return now;
  }

  /** What the node of the last hop placed for this (conversation, adapter) holds, if this edge placed one. */
  heldTokens(conversationId: string, adapter: string, hop: PriorityClass): number | undefined {
    return this.#heldTokens.get(pairKey(conversationId, adapter, hop))?.tokens;
  }
}

interface Placement {
  at: number;
  settled: boolean;
}

function pairKey(conversationId: string, adapter: string, hop: PriorityClass): string {
  return `${conversationId}|${adapter}|${isLatencyClass(hop) ? "view" : "side"}`;
}

/** Tokens of a prompt, estimated from its length (about four characters a token for English text). */
export function estimatePromptTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
