import { DurableObject } from "cloudflare:workers";
import { DEFAULT_HARNESS } from "../../../schema/harness/default-harness.ts";
import { hashHarness } from "../../../schema/harness/content-hash.ts";
import { createHarnessResolver, parseHarnessOverlay } from "../../../schema/harness/harness-config.ts";
import { readServedModel } from "../fleet/read-served-model.ts";
import { createNatsGenerateClient } from "../nats/generate-client.ts";
import { DEFAULT_FLEET_STALE_MS, createFleetPlacement } from "../fleet/create-fleet-placement.ts";
import {
  startTurnRequestSchema,
  type ConversationHandle,
  type StartTurnRequest,
  type StartTurnResult,
  type TurnRefusal,
} from "../conversation/conversation-rpc.ts";
import type { ConversationMeta } from "../conversation/conversation-store.ts";
import { buildTurnId } from "../conversation/item-id.ts";
import { listItems } from "../conversation/list-items.ts";
import * as storedTurns from "../conversation/stored-turns.ts";
import type { StoredTimelineEvent } from "../db/timeline-event.ts";
import { ConversationTurns } from "../turns/conversation-turns.ts";
import { startStatelessTurn, type TurnLoopDeps } from "../turns/turn-loop.ts";
import type { TenantLimiterObject } from "./tenant-limiter-object.ts";
import { connectNatsFromEnv, holdConnectionDuringHops, type NatsConnector } from "./connect-nats.ts";
import { createD1GenuiComponentStore } from "./d1-genui-component-store.ts";
import { createD1UsageStore, writeUsageDataPoints } from "./d1-usage-store.ts";
import { DrizzleConversationStore } from "./drizzle-conversation-store.ts";
import { decodeTurnRequest } from "./turn-paths.ts";
import type { Env } from "./env.ts";
import { ConversationWebhooks } from "./conversation-webhooks.ts";
import { TurnTraces } from "./turn-traces.ts";
import { ensureEdgeTracing } from "./edge-tracing.ts";
import { StageClock } from "../lib/stage-timings.ts";

/** A node that has not sent its `start` part by then is taken as hung; the hop goes to another node. */
const DEFAULT_HOP_FIRST_PART_TIMEOUT_MS = 3_000;
/** Per-attempt deadline of the one-message hops (route, summary) before they fail over. */
const DEFAULT_HOP_REPLY_TIMEOUT_MS = 10_000;
/**
 * Silence between answer parts after which the node is taken as lost and another continues the answer: nodes send a
 * keepalive part every second (`STREAM_KEEPALIVE_MS`), so three seconds of nothing is a dead or hung node.
 */
const DEFAULT_HOP_STALL_TIMEOUT_MS = 3_000;

/**
 * One conversation, adapted to a Durable Object: its timeline in this object's SQLite, the webhook outbox and its
 * alarm, and the NATS connection its hops use (reused across turns). The turns themselves, their order, their
 * idempotency and their charging are the core's: see conversation/turn-loop.ts.
 */
export class ConversationObject
  extends DurableObject<Env>
  implements Omit<ConversationHandle, "startTurn" | "startStatelessTurn" | "attachTurn">
{
  readonly #store: DrizzleConversationStore;
  readonly #nats: NatsConnector;
  readonly #webhooks: ConversationWebhooks;
  readonly #deps: TurnLoopDeps;
  readonly #turns: ConversationTurns;
  readonly #traces = new TurnTraces();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ensureEdgeTracing(env);
    this.#store = new DrizzleConversationStore(ctx.storage, () => Date.now());
    this.#nats = connectNatsFromEnv(env, `molmesh-edge-conversation-${ctx.id.toString().slice(0, 12)}`);
    this.#webhooks = new ConversationWebhooks(ctx, env);
    const placement = createFleetPlacement({
      connection: () => this.#nats.get(),
      staleAfterMs: readMs(env.MOL_FLEET_STALE_MS, DEFAULT_FLEET_STALE_MS),
      now: Date.now,
      mode: env.MOL_PLACEMENT === "queue-group" ? "queue-group" : "affinity",
    });
    const harnessFor = createHarnessResolver({
      overlay: readHarnessOverlay(env.MOL_HARNESS),
      onInvalid: (error) => console.error(`molmesh: ${error.message}; using the default harness`),
    });
    const harnessHash = hashHarness(DEFAULT_HARNESS);
    const usage = createD1UsageStore(env.DB, Date.now);
    this.#deps = {
      client: holdConnectionDuringHops(
        this.#nats,
        createNatsGenerateClient(
          () => this.#nats.get(),
          env.MOL_SUBJECT_PREFIX,
          (hopRequestId) => this.#traces.ofHop(hopRequestId),
        ),
      ),
      placement,
      hopTimeouts: {
        firstPartMs: readMs(env.MOL_HOP_FIRST_PART_TIMEOUT_MS, DEFAULT_HOP_FIRST_PART_TIMEOUT_MS),
        stallMs: readMs(env.MOL_HOP_STALL_TIMEOUT_MS, DEFAULT_HOP_STALL_TIMEOUT_MS),
        replyMs: readMs(env.MOL_HOP_REPLY_TIMEOUT_MS, DEFAULT_HOP_REPLY_TIMEOUT_MS),
      },
      harness: DEFAULT_HARNESS,
      harnessHash,
      // The chat format and context of the nodes serving this mesh's adapters; before any heartbeat, the
      // plain-format default on 4,096 tokens (with MOL_HARNESS laid over it).
      resolveHarness: async () => {
        const served = readServedModel(await placement.nodes(), [
          DEFAULT_HARNESS.router.adapter,
          ...DEFAULT_HARNESS.router.labels,
        ]);
        return harnessFor(served ?? { family: "plain", contextTokens: DEFAULT_HARNESS.contextTokens });
      },
      now: Date.now,
      newTurnId: (conversationId) => buildTurnId(conversationId, crypto.randomUUID().replace(/-/g, "")),
      genui: {
        components: createD1GenuiComponentStore(env.DB),
        newId: (prefix) => `${prefix}_${crypto.randomUUID().replace(/-/g, "")}`,
        now: Date.now,
      },
      // The tenant's per-minute bucket and monthly quota live in its limiter object.
      meter: {
        record: (tenantId, charge) =>
          (env.LIMITS.getByName(tenantId) as DurableObjectStub<TenantLimiterObject>).record(charge.tokens),
      },
      // Usage by key, end user and adapter: D1 rows for billing, and Analytics Engine points when bound.
      usage: {
        record: (turn) => {
          writeUsageDataPoints(env.MOL_ANALYTICS, turn);
          // The loop ignores a failed record (the turn is done); the log line is what an operator can replay.
          return usage.record(turn).catch((error: unknown) => {
            console.error(JSON.stringify({ msg: "usage write failed", usage: turn, error: String(error) }));
          });
        },
      },
    };
    this.#turns = new ConversationTurns({ ...this.#deps, store: this.#store, outbox: this.#webhooks });
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

  startDetachedTurn(
    request: StartTurnRequest,
  ): Promise<{ ok: true; turnId: string } | { ok: false; refusal: TurnRefusal }> {
    return Promise.resolve(this.#turns.startDetachedTurn(startTurnRequestSchema.parse(request)));
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

  listItems(query: { after?: string | undefined; limit: number; order: "asc" | "desc" }) {
    const meta = this.#store.readMeta();
    if (!meta) return Promise.resolve(null);
    const page = listItems(this.#store, meta.id, query);
    return Promise.resolve("error" in page ? { items: [], hasMore: false } : page);
  }

  async createFrom(meta: ConversationMeta, seed: readonly StoredTimelineEvent[]): Promise<ConversationMeta> {
    const existing = this.#store.readMeta();
    if (existing) return existing;
    await this.#store.migrate();
    this.#store.createMeta(meta);
    this.#store.append(seed.map(({ seq: _seq, createdAt: _createdAt, ...event }) => event));
    return meta;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async updateMetadata(metadata: Record<string, string>): Promise<ConversationMeta | null> {
    const meta = this.#store.readMeta();
    if (!meta) return null;
    this.#store.updateMetadata(metadata);
    return { ...meta, metadata };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async readTurn(turnId: string) {
    return this.#turns.readTurn(turnId);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async exportThrough(turnId: string): Promise<StoredTimelineEvent[] | null> {
    return this.#store.readMeta() ? storedTurns.exportThrough(this.#store, turnId) : null;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async deleteResponse(turnId: string): Promise<boolean> {
    return this.#store.readMeta() ? storedTurns.deleteResponse(this.#store, turnId) : false;
  }

  async cancelTurn(turnId: string) {
    const meta = this.#store.readMeta();
    if (!meta) return null;
    // The cancel lands once the answer hop has stopped and `turn_cancelled` is in the timeline.
    if (this.#turns.cancel(turnId)) await this.#turns.settled(turnId);
    return storedTurns.readStoredTurn(this.#store, meta.id, turnId)?.turn ?? null;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async readItem(itemId: string) {
    const meta = this.#store.readMeta();
    return meta ? storedTurns.readItem(this.#store, meta.id, itemId) : null;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async deleteItem(itemId: string): Promise<boolean> {
    const meta = this.#store.readMeta();
    return meta ? storedTurns.deleteItem(this.#store, meta.id, itemId) : false;
  }

  async addItems(messages: Array<{ role: "user" | "assistant"; text: string }>) {
    const meta = this.#store.readMeta();
    if (!meta) return null;
    // After any running turn, so the items come after it in the timeline and open the next turn's views.
    const turnId = buildTurnId(meta.id, crypto.randomUUID().replace(/-/g, ""));
    return this.#turns.afterTurns(() => Promise.resolve(storedTurns.addItems(this.#store, turnId, messages)));
  }

  async remove(): Promise<boolean> {
    const existed = this.#store.readMeta() !== undefined;
    // Wait for a running turn, so no event lands after the delete.
    await this.#turns.afterTurns(() => this.#store.deleteAll());
    return existed;
  }

  /**
   * Turns come in through `fetch`, not RPC: a streamed response body passed back over `fetch` is cancelled when
   * the client goes away (verified in workerd; an RPC-returned stream is not), and that cancels the answer hop.
   */
  override async fetch(request: Request): Promise<Response> {
    const stages = new StageClock(Date.now);
    const decoded = await stages.time("decode", () => decodeTurnRequest(request));
    if (decoded.kind === "invalid") {
      return Response.json(
        { status: decoded.status, code: "invalid_turn_request", message: decoded.message },
        {
          status: decoded.status,
        },
      );
    }
    // The turn's hops carry the HTTP request's id and trace to the node (its logs and spans).
    const trace = TurnTraces.read(request);
    const newTurnId = (conversationId: string) =>
      this.#traces.track(this.#deps.newTurnId(conversationId), trace);
    const result =
      decoded.kind === "attach"
        ? (this.#turns.attach(decoded.turnId) ?? notFound(decoded.turnId))
        : decoded.kind === "stored"
          ? // Turn ids name the conversation they are stored in (its meta id), which is where reads go.
            this.#turns.startTurn(
              decoded.request,
              newTurnId(this.#store.readMeta()?.id ?? decoded.request.conversationId),
              stages,
            )
          : startStatelessTurn({ ...this.#deps, newTurnId }, decoded.request);
    if (!result.ok) return Response.json(result.refusal, { status: result.refusal.status });
    return new Response(result.stream, { headers: { "content-type": "application/x-ndjson" } });
  }
}

/** An invalid MOL_HARNESS is reported and ignored: the edge keeps serving with the per-model defaults. */
function readHarnessOverlay(text: string | undefined): ReturnType<typeof parseHarnessOverlay> {
  try {
    return parseHarnessOverlay(text);
  } catch (error) {
    console.error(`molmesh: ${String(error)}; using the default harness`);
    return undefined;
  }
}

function notFound(turnId: string): StartTurnResult {
  return {
    ok: false,
    refusal: { status: 404, code: "response_not_found", message: `no response ${turnId}` },
  };
}

function readMs(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return value !== undefined && Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}
