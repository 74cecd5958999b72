import type { Placement } from "../../../schema/db/timeline-event.ts";
import type { Usage, WireErrorCode } from "../../../schema/wire/v1/index.ts";

/** The MoL facts of one turn: the extra `mol` object on responses and assistant items. */
export interface TurnMol {
  turnId: string;
  harnessHash: string;
  /** The specialist that answered (after any fallback). */
  label: string;
  /** The adapter that ran the answer hop and its revision (content fingerprint). */
  adapter: string;
  revision?: string;
  source: "router" | "forced" | "fallback";
  fallback?: { code: WireErrorCode; message: string; to: "previous" | "default" };
  nodes: { route?: string; answer?: string; summary?: string };
  /** Edge-measured, ms, plus each hop's total as its GPU node measured it (the difference is transport + edge). */
  timings: {
    routeMs?: number;
    answerFirstTokenMs?: number;
    answerTotalMs?: number;
    summaryMs?: number;
    routeNodeMs?: number;
    answerNodeMs?: number;
    summaryNodeMs?: number;
  };
  /** Per hop: where the edge sent it and why (warm, spill, least-loaded, queue-group), with failed attempts. */
  placement: { route?: Placement; answer?: Placement; summary?: Placement };
  /** Per hop, as the GPU node measured it. */
  usage: { route?: Usage; answer?: Usage; summary?: Usage };
  summary: { status: "pending" | "ready" | "failed" | "none"; text?: string };
}

export type TurnStatus = "in_progress" | "completed" | "failed" | "cancelled";

/** Everything the API layer needs to render a turn as a Response, a chat completion or conversation items. */
export interface TurnRecord {
  turnId: string;
  conversationId: string;
  /** Unix seconds. */
  createdAt: number;
  status: TurnStatus;
  /** Deterministic item ids (derived from the timeline), e.g. `msg_…`. */
  userItemId: string;
  assistantItemId: string;
  userText: string;
  /** The answer so far (complete when status = completed). */
  answerText: string;
  finishReason?: "stop" | "length";
  error?: { code: WireErrorCode | "cancelled"; message: string };
  mol: TurnMol;
}

/** What a running turn streams out of the conversation object, in this order. */
export type TurnStreamPart =
  /** The route decision is made; the answer is about to stream. */
  | { type: "turn-start"; turn: TurnRecord }
  | { type: "text-delta"; delta: string }
  | { type: "turn-finish"; turn: TurnRecord }
  | { type: "turn-error"; turn: TurnRecord; error: { code: WireErrorCode; message: string } };
