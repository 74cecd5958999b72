import { attemptWebhookDelivery } from "./attempt-webhook-delivery.ts";
import type { WebhookUrlPolicy } from "./check-webhook-url.ts";
import { planWebhookRetry, type WebhookRetryDecision } from "./plan-webhook-retry.ts";
import { readSigningSecrets, type WebhookEndpoint } from "./webhook-endpoint-store.ts";
import type { WebhookAttempt, WebhookMessage, WebhookQueue } from "./webhook-queue.ts";

/** What each retry decision records: the attempt's outcome in the log and the message's new status. */
const AFTER_DECISION: Record<
  WebhookRetryDecision["action"],
  { outcome: WebhookAttempt["outcome"]; status: WebhookMessage["status"] }
> = {
  delivered: { outcome: "delivered", status: "delivered" },
  retry: { outcome: "retry", status: "pending" },
  dead_letter: { outcome: "dead", status: "dead" },
  disable_endpoint: { outcome: "disabled", status: "dead" },
};

/** Messages sent per wake-up; the rest wait for the next one, so one wake never runs unbounded. */
export const DELIVERY_BATCH_SIZE = 25;

export interface DeliveryDeps {
  queue: WebhookQueue;
  /** Read fresh before each batch: a rotated secret, a new URL or a disable applies at once. */
  readEndpoint(): Promise<WebhookEndpoint | undefined>;
  /** After a 410: the receiver said the endpoint is gone. Gets the endpoint this wake-up already read. */
  disableEndpoint(endpoint: WebhookEndpoint, reason: string): Promise<void>;
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
    const { outcome, status } = AFTER_DECISION[decision.action];
    const nextAttemptAt = decision.action === "retry" ? decision.retryAt : null;
    queue.recordAttempt({ ...base, outcome }, { status, attempts: attempt, nextAttemptAt });
    if (decision.action === "disable_endpoint") {
      await deps.disableEndpoint(endpoint, "gone");
      queue.killPending("endpoint_disabled:gone", deps.now());
      return undefined;
    }
  }
  return queue.nextDueAt();
}
