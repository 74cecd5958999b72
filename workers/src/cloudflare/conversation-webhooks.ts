import type { WebhookEventType } from "../db/webhook-tables.ts";
import type { ConversationMeta } from "../conversation/conversation-store.ts";
import type { TurnRecord } from "../conversation/turn-record.ts";
import type { TurnOutbox } from "../turns/turn-loop.ts";
import {
  buildSummaryCreatedEvent,
  buildTurnCompletedEvent,
  buildTurnFailedEvent,
  type WebhookEvent,
} from "../api/format/build-webhook-event.ts";
import { flushWebhookOutbox } from "../webhooks/flush-webhook-outbox.ts";
import type { WebhookEndpointStore } from "../webhooks/webhook-endpoint-store.ts";
import { openWebhookEndpointStore } from "./open-webhook-endpoint-store.ts";
import { DrizzleWebhookOutbox } from "./drizzle-webhook-outbox.ts";
import type { Env } from "./env.ts";
import type { WebhookEndpointObject } from "./webhook-endpoint-object.ts";

/** If a flush fails (D1 or a delivery object unreachable), the conversation's alarm retries it this much later. */
const OUTBOX_RETRY_MS = 30_000;

/** The conversation object's side of outbound webhooks: events go to the outbox first, then to the queues. */
export class ConversationWebhooks implements TurnOutbox {
  readonly #ctx: DurableObjectState;
  readonly #env: Env;
  readonly #outbox: DrizzleWebhookOutbox;
  /** Opened once: each turn and summary asks it, and opening builds a drizzle client over D1. */
  readonly #endpoints: WebhookEndpointStore;
  #flushing: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    this.#ctx = ctx;
    this.#env = env;
    this.#endpoints = openWebhookEndpointStore(env);
    this.#outbox = new DrizzleWebhookOutbox(ctx.storage);
  }

  /**
   * Records the event a finished turn (or its summary) raises, then flushes in the background. An event no
   * endpoint of the tenant subscribes to is not raised at all (most tenants have none): no outbox row, no alarm.
   */
  async emit(meta: ConversationMeta, turn: TurnRecord, phase: "turn" | "summary"): Promise<void> {
    const type = eventTypeOf(turn, phase);
    if (!type) return;
    // A failed lookup (D1 unreachable) outboxes the event anyway: the alarm's flush decides once D1 answers.
    const subscribed = await this.#endpoints.listSubscribed(meta.tenantId, type).then(
      (endpoints) => endpoints.length > 0,
      () => true,
    );
    if (!subscribed) return;
    const event = await buildEvent(meta, turn, type);
    this.#outbox.add(event, Date.now());
    // The alarm first, so an event outboxed just before a crash is still flushed.
    await this.#ctx.storage.setAlarm(Date.now() + OUTBOX_RETRY_MS);
    void this.flush(meta.tenantId).catch(() => undefined);
  }

  /** An event that is not a turn's (a label rolled back): outboxed and flushed like a turn's, if subscribed. */
  async emitEvent(tenantId: string, event: WebhookEvent): Promise<void> {
    const subscribed = await this.#endpoints.listSubscribed(tenantId, event.type).then(
      (endpoints) => endpoints.length > 0,
      () => true,
    );
    if (!subscribed) return;
    this.#outbox.add(event, Date.now());
    await this.#ctx.storage.setAlarm(Date.now() + OUTBOX_RETRY_MS);
    void this.flush(tenantId).catch(() => undefined);
  }

  /** One flush at a time; a failure leaves the rows and the alarm in place. */
  flush(tenantId: string): Promise<void> {
    const run = this.#flushing.then(async () => {
      if (this.#outbox.list().length === 0) return;
      await flushWebhookOutbox({
        tenantId,
        outbox: this.#outbox,
        endpoints: this.#endpoints,
        deliveryLog: (endpointId) =>
          this.#env.WEBHOOKS.getByName(endpointId) as DurableObjectStub<WebhookEndpointObject>,
      });
    });
    this.#flushing = run.catch(() => undefined);
    return run;
  }
}

/** The event a turn's phase raises, if any: a summary only once ready, a turn only once it ended. */
function eventTypeOf(turn: TurnRecord, phase: "turn" | "summary"): WebhookEventType | undefined {
  if (phase === "summary")
    return turn.mol.summary.status === "ready" ? "conversation.summary.created" : undefined;
  if (turn.status === "completed") return "conversation.turn.completed";
  if (turn.status === "failed" || turn.status === "cancelled") return "conversation.turn.failed";
  return undefined;
}

function buildEvent(meta: ConversationMeta, turn: TurnRecord, type: WebhookEventType): Promise<WebhookEvent> {
  const ctx = { conversationId: meta.id, metadata: meta.metadata, now: Date.now() };
  if (type === "conversation.summary.created") return buildSummaryCreatedEvent(turn, ctx);
  if (type === "conversation.turn.completed") return buildTurnCompletedEvent(turn, ctx);
  return buildTurnFailedEvent(turn, ctx);
}
