import { checkWebhookUrl, type WebhookUrlPolicy } from "./check-webhook-url.ts";
import type { WebhookAttemptOutcome } from "./plan-webhook-retry.ts";
import { signWebhook } from "./webhook-signatures.ts";

/** A receiver gets this long to answer; Standard Webhooks asks receivers to answer within 15 s. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;

export interface DeliveryTarget {
  url: string;
  /** The current secret, and the previous one while a rotation's grace period runs. */
  secrets: readonly string[];
}

export interface AttemptReport {
  outcome: WebhookAttemptOutcome;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Sends one signed attempt. Redirects are not followed (a `Location` could point anywhere, past the SSRF guard), so a
 * 3xx counts as a failed attempt; the URL is re-checked before every attempt, not only at registration.
 */
export async function attemptWebhookDelivery(
  message: { id: string; body: string },
  target: DeliveryTarget,
  io: { fetch: typeof fetch; now: () => number; timeoutMs: number; urlPolicy: WebhookUrlPolicy },
): Promise<AttemptReport> {
  const started = io.now();
  const check = checkWebhookUrl(target.url, io.urlPolicy);
  if (!check.ok) {
    return {
      outcome: { kind: "network_error" },
      statusCode: null,
      error: `url_${check.reason}`,
      durationMs: 0,
    };
  }
  const headers = signWebhook({
    id: message.id,
    timestamp: Math.floor(started / 1000),
    body: message.body,
    secrets: target.secrets,
  });
  try {
    const response = await io.fetch(check.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "user-agent": "molmesh-webhooks/1" },
      body: message.body,
      redirect: "manual",
      signal: AbortSignal.timeout(io.timeoutMs),
    });
    // The body is never used; cancelling it frees the connection.
    await response.body?.cancel().catch(() => undefined);
    return {
      outcome: { kind: "response", status: response.status, retryAfter: response.headers.get("retry-after") },
      statusCode: response.status,
      error: null,
      durationMs: io.now() - started,
    };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return {
      outcome: { kind: "network_error" },
      statusCode: null,
      error: timedOut ? "timeout" : "network_error",
      durationMs: io.now() - started,
    };
  }
}
