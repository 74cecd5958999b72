import type { StoredTimelineEvent } from "../db/timeline-event.ts";
import { ConversationTurns } from "../turns/conversation-turns.ts";
import { startStatelessTurn, type TurnLoopDeps, type TurnOutbox } from "../turns/turn-loop.ts";
import type { StageClock } from "../lib/stage-timings.ts";
import {
  startTurnRequestSchema,
  turnFeedbackSchema,
  type TurnFeedbackInput,
  type TurnFeedbackResult,
  type ItemPage,
  type StartTurnRequest,
  type StartTurnResult,
  type StatelessTurnRequest,
  type StoredItem,
  type StoredTurn,
  type TurnRefusal,
} from "../conversation/conversation-rpc.ts";
import type { ConversationMeta, ConversationStore } from "../conversation/conversation-store.ts";
import { buildTurnId } from "../conversation/item-id.ts";
import { listItems } from "../conversation/list-items.ts";
import * as storedTurns from "../conversation/stored-turns.ts";
import type { TurnRecord } from "../conversation/turn-record.ts";

/** The conversation's storage: the timeline store, and bringing its tables up to this build's schema. */
export type ConversationCoreStore = ConversationStore & {
  /** Creates or upgrades the tables; idempotent. */
  migrate(): Promise<void>;
};

export interface ConversationCorePorts {
  store: ConversationCoreStore;
  outbox: TurnOutbox;
  /** The turn loop's ports: generate client, placement, harness, meter, usage, clocks and ids. */
  loop: TurnLoopDeps;
}

/**
 * One conversation, whatever runs it: its timeline, its turns (one at a time, idempotent, charged) and the reads
 * and writes the API makes of it. A Durable Object adapts it (storage, alarms, RPC); every operation an API route
 * needs of a conversation is a method here, and the object passes calls through by name (see
 * {@link CONVERSATION_OPERATIONS}), so a new operation is one method here and the route that calls it.
 */
export class ConversationCore {
  readonly #store: ConversationCoreStore;
  readonly #loop: TurnLoopDeps;
  readonly #turns: ConversationTurns;

  constructor(ports: ConversationCorePorts) {
    this.#store = ports.store;
    this.#loop = ports.loop;
    this.#turns = new ConversationTurns({ ...ports.loop, store: ports.store, outbox: ports.outbox });
  }

  async create(meta: ConversationMeta): Promise<ConversationMeta> {
    const existing = this.#store.readMeta();
    if (existing) return existing;
    await this.#store.migrate();
    this.#store.createMeta(meta);
    return meta;
  }

  describe(): Promise<ConversationMeta | null> {
    return Promise.resolve(this.#store.readMeta() ?? null);
  }

  listItems(query: {
    after?: string | undefined;
    limit: number;
    order: "asc" | "desc";
  }): Promise<ItemPage | null> {
    const meta = this.#store.readMeta();
    if (!meta) return Promise.resolve(null);
    const page = listItems(this.#store, meta.id, query);
    return Promise.resolve("error" in page ? { items: [], hasMore: false } : page);
  }

  /** A fork's start: a new conversation whose timeline begins with `seed` (events of another one). */
  async createFrom(meta: ConversationMeta, seed: readonly StoredTimelineEvent[]): Promise<ConversationMeta> {
    const existing = this.#store.readMeta();
    if (existing) return existing;
    await this.#store.migrate();
    this.#store.createMeta(meta);
    this.#store.append(seed.map(({ seq: _seq, createdAt: _createdAt, ...event }) => event));
    return meta;
  }

  updateMetadata(metadata: Record<string, string>): Promise<ConversationMeta | null> {
    const meta = this.#store.readMeta();
    if (!meta) return Promise.resolve(null);
    this.#store.updateMetadata(metadata);
    return Promise.resolve({ ...meta, metadata });
  }

  readTurn(turnId: string): Promise<StoredTurn | null> {
    return Promise.resolve(this.#turns.readTurn(turnId));
  }

  /** The events up to and including `turnId`'s, to fork from; null if no such (undeleted) turn. */
  exportThrough(turnId: string): Promise<StoredTimelineEvent[] | null> {
    return Promise.resolve(this.#store.readMeta() ? storedTurns.exportThrough(this.#store, turnId) : null);
  }

  /** Appends the tombstone; false when there is no such (undeleted) response. */
  deleteResponse(turnId: string): Promise<boolean> {
    return Promise.resolve(this.#store.readMeta() ? storedTurns.deleteResponse(this.#store, turnId) : false);
  }

  /** Aborts a running turn; resolves once its answer hop stopped and `turn_cancelled` is in the timeline. */
  async cancelTurn(turnId: string): Promise<TurnRecord | null> {
    const meta = this.#store.readMeta();
    if (!meta) return null;
    if (this.#turns.cancel(turnId)) await this.#turns.settled(turnId);
    return storedTurns.readStoredTurn(this.#store, meta.id, turnId)?.turn ?? null;
  }

  /**
   * A user's verdict on a finished turn: appended to the timeline (views ignore it; the turn's `mol.feedback` shows
   * the latest), then, when negative, reported to the rollout guard against the label arm that ran the turn. The
   * guard counts only the first negative feedback per turn, and only while the label still carries the canary (and
   * the arm's version) the turn was counted under; `counted` says whether it did. A turn still answering is
   * refused; one whose background steps still run here is waited for, so the guard has counted it first.
   */
  async recordFeedback(turnId: string, input: TurnFeedbackInput): Promise<TurnFeedbackResult> {
    const feedback = turnFeedbackSchema.parse(input);
    const meta = this.#store.readMeta();
    const before = meta ? this.#turns.readTurn(turnId) : null;
    if (!meta || !before || before.deleted) return { ok: false, error: "not_found" };
    if (before.turn.status === "in_progress") return { ok: false, error: "in_progress" };
    await this.#turns.finished(turnId);
    this.#store.append([
      {
        type: "feedback",
        turnId,
        rating: feedback.rating,
        ...(feedback.comment === undefined ? {} : { comment: feedback.comment }),
      },
    ]);
    const stored = storedTurns.readStoredTurn(this.#store, meta.id, turnId);
    if (!stored) return { ok: false, error: "not_found" };
    const { harness } = stored.turn.mol;
    let counted = false;
    if (feedback.rating === "negative" && harness && this.#loop.rollout) {
      const choice = { label: harness.label, arm: harness.arm, source: harness.source };
      // The guard's loss only (D1 unreachable): the feedback itself is stored.
      counted = await this.#loop.rollout
        .recordFeedback({ tenantId: meta.tenantId, turnId, harnessHash: harness.hash, choice })
        .catch(() => false);
    }
    return { ok: true, turn: stored.turn, counted };
  }

  readItem(itemId: string): Promise<StoredItem | null> {
    const meta = this.#store.readMeta();
    return Promise.resolve(meta ? storedTurns.readItem(this.#store, meta.id, itemId) : null);
  }

  deleteItem(itemId: string): Promise<boolean> {
    const meta = this.#store.readMeta();
    return Promise.resolve(meta ? storedTurns.deleteItem(this.#store, meta.id, itemId) : false);
  }

  /** Messages added without a turn; they open the next turn's views. Waits for a running turn. */
  async addItems(
    messages: Array<{ role: "user" | "assistant"; text: string }>,
  ): Promise<StoredItem[] | null> {
    const meta = this.#store.readMeta();
    if (!meta) return null;
    // After any running turn, so the items come after it in the timeline and open the next turn's views.
    const turnId = buildTurnId(meta.id, crypto.randomUUID().replace(/-/g, ""));
    return this.#turns.afterTurns(() => Promise.resolve(storedTurns.addItems(this.#store, turnId, messages)));
  }

  /** Removes everything, after a running turn (so no event lands after the delete); false when it did not exist. */
  async remove(): Promise<boolean> {
    const existed = this.#store.readMeta() !== undefined;
    await this.#turns.afterTurns(() => this.#store.deleteAll());
    return existed;
  }

  /** A turn that runs to completion with nobody streaming it (inbound webhooks); its answer goes out as an event. */
  startDetachedTurn(
    request: StartTurnRequest,
  ): Promise<{ ok: true; turnId: string } | { ok: false; refusal: TurnRefusal }> {
    return Promise.resolve(this.#turns.startDetachedTurn(startTurnRequestSchema.parse(request)));
  }

  /** A streamed turn; `turnId` is the one its hops carry (and its traces key on). */
  startTurn(request: StartTurnRequest, turnId: string, stages?: StageClock): StartTurnResult {
    return this.#turns.startTurn(request, turnId, stages);
  }

  /** A turn of the stateless API: no timeline kept; `newTurnId` names it (and keys its traces). */
  startStatelessTurn(
    request: StatelessTurnRequest,
    newTurnId: (conversationId: string) => string,
  ): StartTurnResult {
    return startStatelessTurn({ ...this.#loop, newTurnId }, request);
  }

  /** Stream resume of a turn: its parts from the first, then live; undefined for an unknown one. */
  attach(turnId: string): StartTurnResult | undefined {
    return this.#turns.attach(turnId);
  }

  /** The id the next turn of this conversation gets (stored turn ids name their conversation). */
  newTurnId(fallbackConversationId: string): string {
    return this.#loop.newTurnId(this.#store.readMeta()?.id ?? fallbackConversationId);
  }
}

/**
 * The operations a conversation answers over RPC, by name: the Durable Object passes each through to its core, and
 * the Worker's handle calls them by the same names. Turns are not among them: they stream, over `fetch`.
 */
export const CONVERSATION_OPERATIONS = [
  "create",
  "describe",
  "listItems",
  "createFrom",
  "updateMetadata",
  "readTurn",
  "exportThrough",
  "deleteResponse",
  "cancelTurn",
  "recordFeedback",
  "readItem",
  "deleteItem",
  "addItems",
  "remove",
  "startDetachedTurn",
] as const satisfies ReadonlyArray<keyof ConversationCore>;

export type ConversationOperation = (typeof CONVERSATION_OPERATIONS)[number];

/** The RPC surface of a conversation: each operation, as the core defines it. */
export type ConversationOperations = Pick<ConversationCore, ConversationOperation>;

/** What the API asks of one conversation (a Durable Object in production): its operations, and its turns. */
export type ConversationHandle = ConversationOperations & {
  /** Stream resume: NDJSON of the turn's parts from its first, then live; null for an unknown response. */
  attachTurn(turnId: string): Promise<ReadableStream<Uint8Array> | null>;
  startTurn(request: StartTurnRequest): Promise<StartTurnResult>;
  startStatelessTurn(request: StatelessTurnRequest): Promise<StartTurnResult>;
};

/** Finds a conversation's handle; conversations are addressed under their tenant. */
export type ConversationDirectory = (tenantId: string, conversationId: string) => ConversationHandle;
