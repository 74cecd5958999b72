import { DurableObject } from "cloudflare:workers";
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from "../webhooks/attempt-webhook-delivery.ts";
import { deliverDueMessages } from "../webhooks/deliver-due-messages.ts";
import type { WebhookDeliveryLog, WebhookMessage } from "../webhooks/webhook-queue.ts";
import { openWebhookEndpointStore } from "./open-webhook-endpoint-store.ts";
import { DrizzleWebhookQueue } from "./drizzle-webhook-queue.ts";
import type { Env } from "./env.ts";
import { readWebhookSettings } from "./read-webhook-settings.ts";

/**
 * One webhook endpoint's delivery queue (named by the endpoint id). Messages wait in SQLite and a Durable Object
 * alarm wakes the object when the next one is due; alarms are durable and retried by the runtime, so queued
 * deliveries survive restarts and crashes. One object per endpoint keeps each receiver's backoff its own.
 */
export class WebhookEndpointObject extends DurableObject<Env> implements WebhookDeliveryLog {
  readonly #queue: DrizzleWebhookQueue;
  readonly #ready: Promise<void>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#queue = new DrizzleWebhookQueue(ctx.storage);
    this.#ready = ctx.blockConcurrencyWhile(() => this.#queue.migrate());
  }

  /** Queues an event for this endpoint; a repeat of the same message id is a no-op. */
  async enqueue(endpointId: string, message: { id: string; eventType: string; body: string }): Promise<void> {
    await this.#ready;
    // Remembered for the alarm, which gets no arguments; written once, not on every event.
    if ((await this.ctx.storage.get<string>("endpointId")) !== endpointId) {
      await this.ctx.storage.put("endpointId", endpointId);
    }
    if (this.#queue.enqueue({ ...message, now: Date.now() })) await this.#wakeBy(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.#ready;
    const endpointId = await this.ctx.storage.get<string>("endpointId");
    if (!endpointId) return;
    const settings = readWebhookSettings(this.env);
    const store = openWebhookEndpointStore(this.env);
    const next = await deliverDueMessages({
      queue: this.#queue,
      readEndpoint: () => store.getById(endpointId),
      disableEndpoint: async (endpoint, reason) => {
        const now = Math.floor(Date.now() / 1000);
        await store.update(
          endpoint.tenantId,
          endpointId,
          { status: "disabled", disabledReason: reason, updatedAt: now },
          {
            tenantId: endpoint.tenantId,
            actor: "system",
            action: "webhook_endpoint.disabled",
            target: endpointId,
            details: { reason, status: 410 },
            createdAt: now,
          },
        );
      },
      fetch: (input, init) => fetch(input, init),
      now: Date.now,
      timeoutMs: settings.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      compression: settings.compression,
      urlPolicy: { allowLoopback: settings.allowLoopback },
    });
    if (next !== undefined) await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  async listMessages(query: {
    after?: string | undefined;
    limit: number;
    status?: WebhookMessage["status"] | undefined;
  }) {
    await this.#ready;
    return this.#queue.list(query);
  }

  async getMessage(id: string) {
    await this.#ready;
    const message = this.#queue.get(id);
    return message ? { message, attempts: this.#queue.listAttempts(id) } : undefined;
  }

  /** Manual redelivery: the same message (same `webhook-id`) from the start of the schedule. */
  async redeliver(id: string) {
    await this.#ready;
    const message = this.#queue.requeue(id, Date.now());
    if (message) await this.#wakeBy(Date.now());
    return message;
  }

  async #wakeBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }
}
