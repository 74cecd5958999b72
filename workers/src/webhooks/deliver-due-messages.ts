import { attemptWebhookDelivery } from "./attempt-webhook-delivery.ts";
import type { WebhookUrlPolicy } from "./check-webhook-url.ts";
import { planWebhookRetry } from "./plan-webhook-retry.ts";
import { readSigningSecrets, type WebhookEndpoint } from "./webhook-endpoint-store.ts";
import type { WebhookQueue } from "./webhook-queue.ts";

/** Messages sent per wake-up; the rest wait for the next one, so one wake never runs unbounded. */
export const DELIVERY_BATCH_SIZE = 25;

export interface DeliveryDeps {
  queue: WebhookQueue;
  /** Read fresh before each batch: a rotated secret, a new URL or a disable applies at once. */
  readEndpoint(): Promise<WebhookEndpoint | undefined>;
  /** After a 410: the receiver said the endpoint is gone. */
  disableEndpoint(reason: string): Promise<void>;
  fetch: typeof fetch;
  now: () => number;
  random?: () => number;
  timeoutMs: number;
  /** Scales the retry schedule (tests and the local mesh compress 3.5 days into minutes). */
  compression: number;
  urlPolicy: WebhookUrlPolicy;
}

/**
 * One wake-up of an endpoint's delivery object: sends the due messages in order and records each attempt. Returns
 * when to wake next (unix ms), or undefined when nothing is pending. A crash mid-attempt leaves the message pending
 * and due, so it is sent again: delivery is at-least-once, and the unchanged `webhook-id` lets receivers dedupe.
 */
export async function deliverDueMessages(deps: DeliveryDeps): Promise<number | undefined> {
  const { queue } = deps;
  const endpoint = await deps.readEndpoint();
  if (!endpoint || endpoint.status !== "enabled") {
    queue.killPending(
      endpoint ? `endpoint_disabled:${endpoint.disabledReason ?? "manual"}` : "endpoint_deleted",
      deps.now(),
    );
    return undefined;
  }
  for (const message of queue.listDue(deps.now(), DELIVERY_BATCH_SIZE)) {
    const attempt = message.attempts + 1;
    const secrets = readSigningSecrets(endpoint, Math.floor(deps.now() / 1000));
    const report = await attemptWebhookDelivery(message, { url: endpoint.url, secrets }, deps);
    const decision = planWebhookRetry({
      attempt,
      outcome: report.outcome,
      now: deps.now(),
      compression: deps.compression,
      ...(deps.random ? { random: deps.random } : {}),
    });
    const base = {
      messageId: message.id,
      startedAt: deps.now() - report.durationMs,
      durationMs: report.durationMs,
      statusCode: report.statusCode,
      error: report.error,
    };
    switch (decision.action) {
      case "delivered":
        queue.recordAttempt(
          { ...base, outcome: "delivered" },
          { status: "delivered", attempts: attempt, nextAttemptAt: null },
        );
        break;
      case "retry":
        queue.recordAttempt(
          { ...base, outcome: "retry" },
          { status: "pending", attempts: attempt, nextAttemptAt: decision.retryAt },
        );
        break;
      case "dead_letter":
        queue.recordAttempt(
          { ...base, outcome: "dead" },
          { status: "dead", attempts: attempt, nextAttemptAt: null },
        );
        break;
      case "disable_endpoint":
        queue.recordAttempt(
          { ...base, outcome: "disabled" },
          { status: "dead", attempts: attempt, nextAttemptAt: null },
        );
        await deps.disableEndpoint("gone");
        queue.killPending("endpoint_disabled:gone", deps.now());
        return undefined;
    }
  }
  return queue.nextDueAt();
}
