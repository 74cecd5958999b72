import { DurableObject } from "cloudflare:workers";
import { DEFAULT_HARNESS } from "../../../schema/harness/default-harness.ts";
import { hashHarness } from "../../../schema/harness/content-hash.ts";
import { createNatsHopClient, type HopClient } from "../gpu/hop-client.ts";
import type { HopPlacement } from "../conversation/place-hop.ts";
import type { HopTimeouts } from "../conversation/turn-context.ts";
import { DEFAULT_FLEET_STALE_MS, createFleetPlacement } from "../fleet/create-fleet-placement.ts";
import { createPartStream } from "../lib/create-part-stream.ts";
import { TurnQueue } from "../lib/turn-queue.ts";
import { buildTurnRecord } from "../conversation/build-turn-record.ts";
import { ConversationTimeline } from "../conversation/conversation-timeline.ts";
import type {
  ConversationHandle,
  StartTurnRequest,
  StartTurnResult,
  StatelessTurnRequest,
  TurnRefusal,
} from "../conversation/conversation-rpc.ts";
import type { ConversationMeta } from "../conversation/conversation-store.ts";
import { listItems } from "../conversation/list-items.ts";
import { replayTurnParts } from "../api/sse/replay-turn-parts.ts";
import { runStatelessTurn } from "../conversation/run-stateless-turn.ts";
import { runTurn } from "../conversation/run-turn.ts";
import type { TurnMol, TurnStreamPart } from "../conversation/turn-record.ts";
import { sumTurnTokens } from "../conversation/sum-turn-tokens.ts";
import type { TenantLimiterObject } from "./tenant-limiter-object.ts";
import { connectNatsFromEnv, type NatsConnector } from "./connect-nats.ts";
import { DrizzleConversationStore } from "./drizzle-conversation-store.ts";
import { STATELESS_TURN_PATH, TURN_PATH } from "./turn-paths.ts";
import type { Env } from "./env.ts";
import { ConversationWebhooks } from "./conversation-webhooks.ts";

/**
 * One conversation: its append-only timeline in this object's SQLite, its views, and its turns, run one at a time.
 * The object also holds the NATS connection its hops use, reused across turns.
 */
export class ConversationObject
  extends DurableObject<Env>
  implements Omit<ConversationHandle, "startTurn" | "startStatelessTurn">
{
  readonly #store: DrizzleConversationStore;
  readonly #queue = new TurnQueue();
  readonly #nats: NatsConnector;
  readonly #hops: HopClient;
  readonly #placement: HopPlacement;
  readonly #hopTimeouts: HopTimeouts;
  readonly #harnessHash: Promise<string>;
  readonly #webhooks: ConversationWebhooks;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new DrizzleConversationStore(ctx.storage, () => Date.now());
    this.#nats = connectNatsFromEnv(env, `molmesh-edge-conversation-${ctx.id.toString().slice(0, 12)}`);
    this.#hops = createNatsHopClient(() => this.#nats.get(), env.MOL_SUBJECT_PREFIX);
    this.#placement = createFleetPlacement({
      connection: () => this.#nats.get(),
      staleAfterMs: readMs(env.MOL_FLEET_STALE_MS, DEFAULT_FLEET_STALE_MS),
      subjectPrefix: env.MOL_SUBJECT_PREFIX,
      now: Date.now,
      mode: env.MOL_PLACEMENT === "queue-group" ? "queue-group" : "affinity",
    });
    this.#hopTimeouts = {
      firstPartMs: readMs(env.MOL_HOP_FIRST_PART_TIMEOUT_MS, DEFAULT_HOP_FIRST_PART_TIMEOUT_MS),
      stallMs: readMs(env.MOL_HOP_STALL_TIMEOUT_MS, DEFAULT_HOP_STALL_TIMEOUT_MS),
      replyMs: readMs(env.MOL_HOP_REPLY_TIMEOUT_MS, DEFAULT_HOP_REPLY_TIMEOUT_MS),
    };
    this.#harnessHash = hashHarness(DEFAULT_HARNESS);
    this.#webhooks = new ConversationWebhooks(ctx, env);
    // A conversation created by an older build gets the newer tables (the webhook outbox) before any call.
    void ctx.blockConcurrencyWhile(async () => {
      if (this.#store.exists) await this.#store.migrate();
    });
  }

  /** The webhook outbox's safety net: flushes what a crash or a failed flush left behind. */
  override async alarm(): Promise<void> {
    const meta = this.#store.readMeta();
    if (meta) await this.#webhooks.flush(meta.tenantId);
  }

  /**
   * A turn nobody streams (an inbound webhook started it): the object drains the parts itself, so the answer runs
   * to completion and reaches the tenant through the outbound `conversation.turn.completed` event.
   */
  async startDetachedTurn(
    request: StartTurnRequest,
  ): Promise<{ ok: true; turnId: string } | { ok: false; refusal: TurnRefusal }> {
    const turnId = newTurnId();
    const result = await this.#startTurn(request, turnId);
    if (!result.ok) return result;
    void result.stream.pipeTo(new WritableStream()).catch(() => undefined);
    return { ok: true, turnId };
  }

  async create(meta: ConversationMeta): Promise<ConversationMeta> {
    const existing = this.#store.readMeta();
    if (existing) return existing;
    await this.#store.migrate();
    this.#store.createMeta(meta);
    return meta;
  }

  async describe(): Promise<ConversationMeta | null> {
    return this.#store.readMeta() ?? null;
  }

  async listItems(query: { after?: string; limit: number; order: "asc" | "desc" }) {
    const meta = this.#store.readMeta();
    if (!meta) return null;
    const page = listItems(this.#store, meta.id, query);
    return "error" in page ? { items: [], hasMore: false } : page;
  }

  async remove(): Promise<boolean> {
    const existed = this.#store.readMeta() !== undefined;
    // Wait for a running turn, so no event lands after the delete.
    await this.#queue.run(async () => {
      await this.#store.deleteAll();
    });
    return existed;
  }

  /**
   * Turns come in through `fetch`, not RPC: a streamed response body passed back over `fetch` is cancelled when
   * the client goes away (verified in workerd; an RPC-returned stream is not), and that cancels the answer hop.
   */
  override async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    const result =
      pathname === TURN_PATH
        ? await this.#startTurn((await request.json()) as StartTurnRequest)
        : pathname === STATELESS_TURN_PATH
          ? await this.#startStatelessTurn((await request.json()) as StatelessTurnRequest)
          : undefined;
    if (!result) return new Response("not found", { status: 404 });
    if (!result.ok) return Response.json(result.refusal, { status: result.refusal.status });
    return new Response(result.stream, { headers: { "content-type": "application/x-ndjson" } });
  }

  async #startTurn(request: StartTurnRequest, turnId = newTurnId()): Promise<StartTurnResult> {
    const meta = this.#store.readMeta();
    if (!meta)
      return refuse(404, "conversation_not_found", `conversation ${request.conversationId} not found`);
    if (request.idempotency) {
      const seen = this.#store.readIdempotency(request.idempotency.key);
      if (seen && seen.requestHash !== request.idempotency.requestHash) {
        return refuse(
          422,
          "idempotency_key_reused",
          "this Idempotency-Key was used with a different request body",
        );
      }
      if (seen) {
        const events = this.#store.readTurn(seen.turnId);
        const turn = events.length > 0 ? buildTurnRecord(meta.id, events) : undefined;
        if (!turn || turn.status === "in_progress") {
          return refuse(
            409,
            "idempotency_key_in_flight",
            "a request with this Idempotency-Key is still running",
          );
        }
        return { ok: true, stream: streamOf(replayTurnParts(turn)) };
      }
      this.#store.writeIdempotency({ ...request.idempotency, turnId });
    }
    const { stream, push, close, signal } = createPartStream<TurnStreamPart>();
    const harnessHash = await this.#harnessHash;
    void this.#queue.run(async () => {
      const timeline = new ConversationTimeline(this.#store, DEFAULT_HARNESS, harnessHash);
      const ctx = { ...this.#hopContext(harnessHash), conversationId: meta.id, timeline };
      try {
        const outcome = await runTurn(ctx, { turnId, ...request }, push, signal);
        close();
        await this.#webhooks.emit(meta, this.#readTurn(meta.id, turnId), "turn");
        // Off the client's critical path, but inside the queue: the next turn sees this summary.
        await outcome.summarize();
        await this.#webhooks.emit(meta, this.#readTurn(meta.id, turnId), "summary");
        await this.#chargeTokens(meta.tenantId, buildTurnRecord(meta.id, this.#store.readTurn(turnId)).mol);
      } catch (error) {
        push({
          type: "turn-error",
          turn: buildTurnRecord(meta.id, this.#store.readTurn(turnId)),
          error: { code: "engine_failure", message: String(error) },
        });
        close();
        await this.#webhooks.emit(meta, this.#readTurn(meta.id, turnId), "turn").catch(() => undefined);
      }
    });
    return { ok: true, stream };
  }

  #readTurn(conversationId: string, turnId: string) {
    return buildTurnRecord(conversationId, this.#store.readTurn(turnId));
  }

  /** Counts the hops' real token figures against the tenant's per-minute bucket and monthly quota. */
  async #chargeTokens(tenantId: string, mol: TurnMol): Promise<void> {
    const limiter = this.env.LIMITS.getByName(tenantId) as DurableObjectStub<TenantLimiterObject>;
    await limiter.record(sumTurnTokens(mol)).catch(() => undefined);
  }

  #hopContext(harnessHash: string) {
    return {
      hops: this.#hops,
      placement: this.#placement,
      hopTimeouts: this.#hopTimeouts,
      harness: DEFAULT_HARNESS,
      harnessHash,
      now: Date.now,
    };
  }

  async #startStatelessTurn(request: StatelessTurnRequest): Promise<StartTurnResult> {
    const { stream, push, close, signal } = createPartStream<TurnStreamPart>();
    const harnessHash = await this.#harnessHash;
    void runStatelessTurn(this.#hopContext(harnessHash), request, push, signal).finally(close);
    return { ok: true, stream };
  }
}

/** A node that has not sent its `start` part by then is taken as hung; the hop goes to another node. */
const DEFAULT_HOP_FIRST_PART_TIMEOUT_MS = 3_000;
/** Per-attempt deadline of the one-message hops (route, summary) before they fail over. */
const DEFAULT_HOP_REPLY_TIMEOUT_MS = 10_000;
/** Silence between answer parts after which the node is taken as lost and the turn fails cleanly. */
const DEFAULT_HOP_STALL_TIMEOUT_MS = 15_000;

function newTurnId(): string {
  return `turn_${crypto.randomUUID().replace(/-/g, "")}`;
}

function readMs(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return value !== undefined && Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

function refuse(status: 404 | 409 | 422, code: string, message: string): StartTurnResult {
  return { ok: false, refusal: { status, code, message } };
}

function streamOf(parts: AsyncIterable<TurnStreamPart>): ReadableStream<Uint8Array> {
  const { stream, push, close } = createPartStream<TurnStreamPart>();
  void (async () => {
    for await (const part of parts) push(part);
    close();
  })();
  return stream;
}
