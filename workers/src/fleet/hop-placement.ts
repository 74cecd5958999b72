import type { NodeStatus, PriorityClass } from "../../../schema/wire/v2/index.ts";
import { chooseNode, type PlacementChoice } from "./choose-node.ts";
import type { PlacementLedger } from "./placement-ledger.ts";

/** One attempt of a hop, as the turn asks placement about it. */
export interface PlacementRequest {
  /** The request's priority class: summaries keep KV slots apart from the views' (see PlacementLedger). */
  hop: PriorityClass;
  adapter: string;
  /** The placement key: the conversation id, or a stateless turn's cache key. */
  conversationId: string;
  /** The node that last served this (conversation, adapter), from the timeline. */
  lastNodeId?: string | undefined;
  /** Features the node must advertise (an answer under an output constraint). */
  requires?: readonly string[] | undefined;
  /** The hop's prompt in tokens, estimated: what a cold node must prefill. */
  promptTokens?: number | undefined;
  /** Nodes that already failed this hop. */
  exclude?: readonly string[] | undefined;
}

/** A placement, and how to tell placement that the hop it placed ended. */
export interface PlacementDecision extends PlacementChoice {
  /**
   * Called once when the hop ends, answered or failed: it stops counting as load on its node; `heldTokens` (set when
   * it answered) is what that node's KV then holds of the pair, in estimatePromptTokens units.
   */
  settle: (heldTokens?: number) => void;
}

/** Where hops go: what the turn asks of the fleet before each hop. */
export interface HopPlacement {
  /** The live fleet (what its nodes serve: chat format, context); an implementation may cache it briefly. */
  nodes(): Promise<readonly NodeStatus[]>;
  /**
   * False for the queue-group baseline: every hop goes to the node NATS picks, while the fleet is still read for
   * what the nodes serve, so both placements render the same views. Default true.
   */
  picksNodes?: boolean;
  /** The node for one attempt of a hop (no node id: the queue group's). */
  place(request: PlacementRequest): Promise<PlacementDecision>;
}

/**
 * Placement over a fleet this process sees: the live nodes, this placer's ledger of the hops it placed since each
 * node's last beat, and what the warm node of each pair holds. The per-colo fleet object runs one for all the
 * conversations of its colo; tests run one over a fixed fleet.
 */
export function placeOverFleet(fleet: {
  nodes(): Promise<readonly NodeStatus[]>;
  /** When the node's last beat was seen (this placer's clock); hops placed after it are load its beat lacks. */
  seenAt?(nodeId: string): number | undefined;
  ledger?: PlacementLedger | undefined;
  picksNodes?: boolean;
}): HopPlacement {
  const { ledger } = fleet;
  return {
    nodes: () => fleet.nodes(),
    ...(fleet.picksNodes === false ? { picksNodes: false } : {}),
    async place(request) {
      const nodes = await fleet.nodes();
      const warmTokens = ledger?.heldTokens(request.conversationId, request.adapter, request.hop);
      const recentHops = ledger?.recentHops((nodeId) => fleet.seenAt?.(nodeId));
      const choice = chooseNode({
        nodes,
        adapter: request.adapter,
        conversationId: request.conversationId,
        ...(request.lastNodeId ? { lastNodeId: request.lastNodeId } : {}),
        exclude: new Set(request.exclude ?? []),
        ...(request.requires && request.requires.length > 0 ? { requires: request.requires } : {}),
        ...(request.promptTokens === undefined ? {} : { promptTokens: request.promptTokens }),
        ...(warmTokens === undefined ? {} : { warmTokens }),
        ...(recentHops ? { recentHops } : {}),
      });
      const settle =
        choice.nodeId === undefined
          ? undefined
          : ledger?.record({
              nodeId: choice.nodeId,
              hop: request.hop,
              conversationId: request.conversationId,
              adapter: request.adapter,
              promptTokens: request.promptTokens ?? 0,
            });
      return { ...choice, settle: (heldTokens) => settle?.(heldTokens) };
    },
  };
}
