import { DurableObject } from "cloudflare:workers";
import type {
  ConversationCore,
  ConversationOperation,
  ConversationOperations,
} from "../core/conversation-core.ts";
import { CONVERSATION_OPERATIONS } from "../core/conversation-core.ts";
import { createConversationCore } from "../core/create-conversation-core.ts";
import type { StartTurnResult } from "../conversation/conversation-rpc.ts";
import { StageClock } from "../lib/stage-timings.ts";
import { createNatsGenerateClient } from "../nats/generate-client.ts";
import { connectNatsFromConfig, holdConnectionDuringHops } from "./connect-nats.ts";
import { ConversationWebhooks } from "./conversation-webhooks.ts";
import { createD1GenuiComponentStore } from "./d1-genui-component-store.ts";
import { createD1HarnessRegistryStore } from "./d1-harness-registry-store.ts";
import { harnessRegistryCaches } from "./harness-registry-caches.ts";
import {
  createHarnessChooser,
  createHarnessRegistryReader,
} from "../harness-registry/choose-turn-harness.ts";
import { createRolloutGuard } from "../harness-registry/guard-rollout.ts";
import { buildHarnessRolledBackEvent } from "../api/format/build-webhook-event.ts";
import { createD1UsageStore, writeUsageDataPoints } from "./d1-usage-store.ts";
import { DrizzleConversationStore } from "./drizzle-conversation-store.ts";
import { ensureEdgeTracing } from "./edge-tracing.ts";
import { edgeConfigOf, type Env } from "./env.ts";
import { fleetObjectName, type FleetObject } from "./fleet-object.ts";
import { placeThroughFleetObject } from "./fleet-object-placement.ts";
import type { TenantLimiterObject } from "./tenant-limiter-object.ts";
import { COLO_HEADER, decodeTurnRequest } from "./turn-paths.ts";
import { TurnTraces } from "./turn-traces.ts";

const OPERATIONS: ReadonlySet<string> = new Set(CONVERSATION_OPERATIONS);

/**
 * One conversation, adapted to a Durable Object: the ports its core needs (the timeline in this object's SQLite,
 * the webhook outbox and its alarm, the NATS connection its hops use, placement by its colo's fleet object) and the
 * two ways in: `call` (an operation by name, over RPC) and `fetch` (turns, streamed). Everything else is the core's
 * (core/conversation-core.ts), built by the composition root (create-conversation-core.ts).
 */
export class ConversationObject extends DurableObject<Env> {
  readonly #core: ConversationCore;
  readonly #webhooks: ConversationWebhooks;
  readonly #traces = new TurnTraces();
  /** The colo this object runs in, as the Worker that first reached it said; names the fleet object it asks. */
  #colo: string | undefined;
  /** The stub of that colo's fleet object, made once: every hop attempt asks it. */
  #fleetStub: { colo: string | undefined; stub: DurableObjectStub<FleetObject> } | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ensureEdgeTracing(env);
    const config = edgeConfigOf(env);
    const store = new DrizzleConversationStore(ctx.storage, () => Date.now());
    const nats = connectNatsFromConfig(config, `molmesh-edge-conversation-${ctx.id.toString().slice(0, 12)}`);
    this.#webhooks = new ConversationWebhooks(ctx, env);
    const usage = createD1UsageStore(env.DB, Date.now);
    const warn = (message: string) => console.error(message);
    const harnessRegistry = createD1HarnessRegistryStore(env.DB);
    const harnessReader = createHarnessRegistryReader(harnessRegistry, harnessRegistryCaches);
    this.#core = createConversationCore(config, {
      store,
      outbox: this.#webhooks,
      client: holdConnectionDuringHops(
        nats,
        createNatsGenerateClient(
          () => nats.get(),
          config.nats.subjectPrefix,
          (hopRequestId) => this.#traces.ofHop(hopRequestId),
        ),
      ),
      placement: placeThroughFleetObject({
        fleet: () => this.#fleet(env),
        cacheMs: config.placement.cacheMs,
        now: Date.now,
        picksNodes: config.placement.mode !== "queue-group",
      }),
      genuiComponents: createD1GenuiComponentStore(env.DB),
      // Pins and the tenant's production label, read through this isolate's caches (labels for 2 s).
      chooseHarness: createHarnessChooser(harnessReader, harnessRegistryCaches.documents, warn),
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
      // Each labelled turn counted per arm; a canary the rule finds worse is removed, with its webhook.
      rollout: createRolloutGuard({
        // The label as the turn's choice read it (the isolate's cache): no D1 read for a label without a canary.
        store: { ...harnessRegistry, getLabel: (tenantId, name) => harnessReader.getLabel(tenantId, name) },
        now: Date.now,
        rolledBack: async (notice) => {
          harnessRegistryCaches.labels.clear();
          const event = await buildHarnessRolledBackEvent(notice, Date.now());
          await this.#webhooks.emitEvent(notice.tenantId, event);
        },
      }),
      now: Date.now,
      randomId: () => crypto.randomUUID().replace(/-/g, ""),
      warn,
    });
    // A conversation created by an older build gets the newer tables (the webhook outbox) before any call.
    void ctx.blockConcurrencyWhile(async () => {
      if (store.exists) await store.migrate();
    });
  }

  #fleet(env: Env): DurableObjectStub<FleetObject> {
    if (this.#fleetStub && this.#fleetStub.colo === this.#colo) return this.#fleetStub.stub;
    const stub = env.FLEET.getByName(fleetObjectName(this.#colo)) as DurableObjectStub<FleetObject>;
    this.#fleetStub = { colo: this.#colo, stub };
    return stub;
  }

  /** The webhook outbox's safety net: flushes what a crash or a failed flush left behind. */
  override async alarm(): Promise<void> {
    const meta = await this.#core.describe();
    if (meta) await this.#webhooks.flush(meta.tenantId);
  }

  /** One operation of the core, by name (see CONVERSATION_OPERATIONS): RPC passes through, nothing more. */
  async call<K extends ConversationOperation>(
    operation: K,
    args: Parameters<ConversationOperations[K]>,
  ): Promise<Awaited<ReturnType<ConversationOperations[K]>>> {
    if (!OPERATIONS.has(operation)) throw new Error(`no conversation operation "${operation}"`);
    const method = this.#core[operation] as (
      ...a: unknown[]
    ) => Promise<Awaited<ReturnType<ConversationOperations[K]>>>;
    return await method.apply(this.#core, args);
  }

  /**
   * Turns come in through `fetch`, not RPC: a streamed response body passed back over `fetch` is cancelled when
   * the client goes away (verified in workerd; an RPC-returned stream is not), and that cancels the answer hop.
   */
  override async fetch(request: Request): Promise<Response> {
    this.#colo ??= request.headers.get(COLO_HEADER) ?? undefined;
    const stages = new StageClock(Date.now);
    const decoded = await stages.time("decode", () => decodeTurnRequest(request));
    if (decoded.kind === "invalid") {
      return Response.json(
        { status: decoded.status, code: "invalid_turn_request", message: decoded.message },
        { status: decoded.status },
      );
    }
    // The turn's hops carry the HTTP request's id and trace to the node (its logs and spans).
    const trace = TurnTraces.read(request);
    const result: StartTurnResult =
      decoded.kind === "attach"
        ? (this.#core.attach(decoded.turnId) ?? notFound(decoded.turnId))
        : decoded.kind === "stored"
          ? // Turn ids name the conversation they are stored in (its meta id), which is where reads go.
            this.#core.startTurn(
              decoded.request,
              this.#traces.track(this.#core.newTurnId(decoded.request.conversationId), trace),
              stages,
            )
          : this.#core.startStatelessTurn(decoded.request, (conversationId) =>
              this.#traces.track(this.#core.newTurnId(conversationId), trace),
            );
    if (!result.ok) return Response.json(result.refusal, { status: result.refusal.status });
    return new Response(result.stream, { headers: { "content-type": "application/x-ndjson" } });
  }
}

function notFound(turnId: string): StartTurnResult {
  return {
    ok: false,
    refusal: { status: 404, code: "response_not_found", message: `no response ${turnId}` },
  };
}
