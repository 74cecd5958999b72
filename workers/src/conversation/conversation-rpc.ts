import type { Sampling } from "../../../schema/wire/v1/index.ts";
import type { ConversationMeta } from "./conversation-store.ts";
import type { TurnRecord } from "./turn-record.ts";

export interface ItemPage {
  items: Array<{ role: "user" | "assistant"; turn: TurnRecord }>;
  hasMore: boolean;
}

export interface StartTurnRequest {
  conversationId: string;
  text: string;
  forcedLabel?: string;
  sampling?: Partial<Sampling>;
  /** Idempotency-Key and the hash of the request body it came with. */
  idempotency?: { key: string; requestHash: string };
}

export interface StatelessTurnRequest {
  /** Whose quota the turn's tokens count against. */
  tenantId: string;
  /** Stable key of the client's conversation (hash of its first messages): the GPU node's KV slot key. */
  conversationKey: string;
  messages: Array<{ role: "system" | "user" | "assistant"; content: string }>;
  forcedLabel?: string;
  sampling?: Partial<Sampling>;
}

export type TurnRefusal = { status: 404 | 409 | 422; code: string; message: string };

/** A started turn: NDJSON of TurnStreamPart; cancelling it cancels the answer hop. */
export type StartTurnResult =
  { ok: true; stream: ReadableStream<Uint8Array> } | { ok: false; refusal: TurnRefusal };

/** What the API asks of one conversation (a Durable Object in production). */
export interface ConversationHandle {
  create(meta: ConversationMeta): Promise<ConversationMeta>;
  describe(): Promise<ConversationMeta | null>;
  listItems(query: { after?: string; limit: number; order: "asc" | "desc" }): Promise<ItemPage | null>;
  /** Removes everything; false when it did not exist. */
  remove(): Promise<boolean>;
  startTurn(request: StartTurnRequest): Promise<StartTurnResult>;
  startStatelessTurn(request: StatelessTurnRequest): Promise<StartTurnResult>;
  /** A turn that runs to completion with nobody streaming it (inbound webhooks); its answer goes out as an event. */
  startDetachedTurn(
    request: StartTurnRequest,
  ): Promise<{ ok: true; turnId: string } | { ok: false; refusal: TurnRefusal }>;
}

/** Finds a conversation's handle; conversations are addressed under their tenant. */
export type ConversationDirectory = (tenantId: string, conversationId: string) => ConversationHandle;
