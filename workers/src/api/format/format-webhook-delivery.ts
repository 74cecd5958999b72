import type { WebhookAttempt, WebhookMessage } from "../../webhooks/webhook-queue.ts";

const toSeconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** One message in an endpoint's delivery log; with `attempts`, the full record including the payload. */
export function formatWebhookDelivery(message: WebhookMessage, attempts?: readonly WebhookAttempt[]) {
  return {
    id: message.id,
    object: "webhook_delivery" as const,
    event_type: message.eventType,
    status: message.status,
    attempt_count: message.attempts,
    next_attempt_at: toSeconds(message.nextAttemptAt),
    last_status_code: message.lastStatusCode,
    last_error: message.lastError,
    created_at: toSeconds(message.createdAt),
    updated_at: toSeconds(message.updatedAt),
    ...(attempts
      ? {
          payload: JSON.parse(message.body) as unknown,
          attempts: attempts.map((attempt) => ({
            started_at_ms: attempt.startedAt,
            duration_ms: attempt.durationMs,
            status_code: attempt.statusCode,
            error: attempt.error,
            outcome: attempt.outcome,
          })),
        }
      : {}),
  };
}
