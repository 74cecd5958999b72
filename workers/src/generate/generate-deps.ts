import type { GenerateClient } from "../nats/generate-client.ts";
import type { HopPlacement } from "./place-generate.ts";

export interface HopTimeouts {
  firstPartMs: number;
  stallMs: number;
  /**
   * Unstreamed requests answer in one message: a node that dies or hangs meanwhile is only noticed by this
   * per-attempt deadline (capped by the harness' own), after which the request goes to another node. Summaries keep
   * their harness timeout (30 s by default) instead: nothing waits on them, and a node may hold one back while
   * routes and answers run, for up to half of it (gpu-nodes/src/engine/hop-priority.ts), so that a client's
   * back-to-back turns seldom decode beside it; a node lost under a summary costs only a later summary.
   */
  replyMs: number;
}

/**
 * What every generate call needs, whatever it is for: the transport, where to send it, how long to wait. The
 * concept functions of this folder (a choice, a text stream, a text) take it as the AI SDK's functions take a model.
 */
export interface GenerateDeps {
  client: GenerateClient;
  placement: HopPlacement;
  hopTimeouts: HopTimeouts;
  /** Unix ms. */
  now: () => number;
}

/** Where one generate request goes and on whose behalf; its id is `<turnId>.<purpose>.<attempt>`. */
export interface GenerateTarget {
  turnId: string;
  /** Whose turn it is: nodes queue requests fairly per tenant. */
  tenantId?: string | undefined;
  /** The KV slot key on the node: the conversation id, or the client's cache key when stateless. */
  slotKey: string;
  /**
   * Which node the request prefers, when not the slot key's: a stateless turn without a cache key gets a slot of its
   * own but still leans to the node that served the same opening (a hint, never a shared slot).
   */
  placementKey?: string | undefined;
  /** The node that last ran this adapter for the conversation (its KV is warm there). */
  lastNodeId?: string | undefined;
  /** `label` or `label@<rev>`. */
  adapter: string;
  /** The exact prompt (the adapter's view and its cue). */
  prompt: string;
}
