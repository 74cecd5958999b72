import { z } from "zod";
import { samplingSchema } from "../../../schema/wire/v1/index.ts";
import type { ConversationMeta } from "./conversation-store.ts";
import type { TurnRecord } from "./turn-record.ts";

export interface ItemPage {
  items: Array<{ role: "user" | "assistant"; turn: TurnRecord }>;
  hasMore: boolean;
}

const sampling = samplingSchema.shape;

/** Per-request sampling overrides: only what the client set, so the specialist's own settings fill the rest. */
const samplingOverridesSchema = z.object({
  maxTokens: sampling.maxTokens.unwrap().optional(),
  temperature: sampling.temperature.unwrap().optional(),
  topP: sampling.topP.unwrap().optional(),
  topK: sampling.topK.unwrap().optional(),
  seed: sampling.seed,
  stop: sampling.stop.unwrap().optional(),
});
export type SamplingOverrides = z.infer<typeof samplingOverridesSchema>;

/** A turn of a stored conversation, as the Worker sends it to the conversation's object. */
export const startTurnRequestSchema = z.object({
  conversationId: z.string().min(1),
  text: z.string(),
  /** Skip the route hop and answer with this specialist (`model: "mol:<label>"`). */
  forcedLabel: z.string().optional(),
  sampling: samplingOverridesSchema.optional(),
  /** Idempotency-Key and the hash of the request body it came with. */
  idempotency: z.object({ key: z.string(), requestHash: z.string() }).optional(),
  /** The API origin the turn came in on: a genui answer's render link points there. */
  apiOrigin: z.url().optional(),
});
export type StartTurnRequest = z.infer<typeof startTurnRequestSchema>;

/** A `/v1/chat/completions` turn: the client sent the whole history, and nothing is stored. */
export const statelessTurnRequestSchema = z.object({
  /** Whose quota the turn's tokens count against. */
  tenantId: z.string().min(1),
  /** Stable key of the client's conversation (hash of its first messages): the GPU node's KV slot key. */
  conversationKey: z.string().min(1),
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })),
  forcedLabel: z.string().optional(),
  sampling: samplingOverridesSchema.optional(),
  apiOrigin: z.url().optional(),
});
export type StatelessTurnRequest = z.infer<typeof statelessTurnRequestSchema>;

export type TurnRefusal = { status: 404 | 409 | 422; code: string; message: string };

/** A started turn: NDJSON of TurnStreamPart; cancelling it cancels the answer hop. */
export type StartTurnResult =
  { ok: true; stream: ReadableStream<Uint8Array> } | { ok: false; refusal: TurnRefusal };

/** What the API asks of one conversation (a Durable Object in production). */
export interface ConversationHandle {
  create(meta: ConversationMeta): Promise<ConversationMeta>;
  describe(): Promise<ConversationMeta | null>;
  listItems(query: {
    after?: string | undefined;
    limit: number;
    order: "asc" | "desc";
  }): Promise<ItemPage | null>;
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
