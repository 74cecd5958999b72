import type { HarnessDocument } from "../../../schema/harness/harness-document.ts";
import type { Sampling } from "../../../schema/wire/v1/index.ts";
import type { HopClient } from "../gpu/hop-client.ts";
import type { ConversationTimeline } from "./conversation-timeline.ts";
import type { HopPlacement } from "./place-hop.ts";

export interface TurnInput {
  turnId: string;
  text: string;
  /** Skip the route hop and answer with this specialist (chat completions `model: "mol:<label>"`). */
  forcedLabel?: string;
  /** Per-request sampling overrides on top of the harness' settings for the chosen specialist. */
  sampling?: Partial<Sampling>;
}

export interface TurnContext {
  conversationId: string;
  timeline: ConversationTimeline;
  hops: HopClient;
  placement: HopPlacement;
  /** Answer-hop liveness limits (first part, silence between parts), in ms. */
  hopTimeouts: HopTimeouts;
  harness: HarnessDocument;
  harnessHash: string;
  /** Unix ms. */
  now: () => number;
}

export interface TurnOutcome {
  /** Runs the summary hop (off the client's critical path); resolves once its event is in the timeline. */
  summarize(): Promise<void>;
}

export interface HopTimeouts {
  firstPartMs: number;
  stallMs: number;
  /**
   * Route and summary hops answer in one message: a node that dies or hangs meanwhile is only noticed by this
   * per-attempt deadline (capped by the harness' own), after which the hop goes to another node.
   */
  replyMs: number;
}
