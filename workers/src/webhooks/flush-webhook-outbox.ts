import type { WebhookEventType } from "../db/webhook-tables.ts";
import type { WebhookDeliveryLog } from "./webhook-queue.ts";
import type { WebhookEndpointStore } from "./webhook-endpoint-store.ts";

/** An outbound event: `body` is what every attempt to every endpoint sends, byte for byte. */
export interface WebhookEvent {
  /** `msg_…`: the Standard Webhooks `webhook-id`, the same on every attempt. */
  id: string;
  type: WebhookEventType;
  body: string;
}

/** A conversation's events waiting to be handed to the endpoints' queues. */
export interface WebhookOutbox {
  add(event: WebhookEvent, now: number): void;
  list(): WebhookEvent[];
  remove(id: string): void;
}

/**
 * Hands each outboxed event to the queue of every endpoint of the tenant subscribed to it, then drops it from the
 * outbox. Enqueueing is idempotent by message id, so a flush interrupted half-way is simply run again (by the
 * conversation's alarm) without ever duplicating a message.
 */
export async function flushWebhookOutbox(deps: {
  tenantId: string;
  outbox: WebhookOutbox;
  endpoints: Pick<WebhookEndpointStore, "listSubscribed">;
  deliveryLog: (endpointId: string) => Pick<WebhookDeliveryLog, "enqueue">;
}): Promise<number> {
  const subscribers = new Map<WebhookEventType, Promise<{ id: string }[]>>();
  let handed = 0;
  for (const event of deps.outbox.list()) {
    let targets = subscribers.get(event.type);
    if (!targets) {
      targets = deps.endpoints.listSubscribed(deps.tenantId, event.type);
      subscribers.set(event.type, targets);
    }
    for (const endpoint of await targets) {
      await deps
        .deliveryLog(endpoint.id)
        .enqueue(endpoint.id, { id: event.id, eventType: event.type, body: event.body });
      handed++;
    }
    deps.outbox.remove(event.id);
  }
  return handed;
}
