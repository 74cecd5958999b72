/**
 * Delay before each attempt, relative to the previous one (Standard Webhooks / Svix schedule): attempt 1 goes out now,
 * attempt 10 about 24 h after attempt 9, roughly 3.5 days end to end.
 */
export const WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];

export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_SCHEDULE_MS.length;

/** ±20 %: spreads retries after a receiver outage so they do not all land in the same second. */
export const WEBHOOK_RETRY_JITTER = 0.2;

/** 429 and any 5xx: the receiver is overloaded or failing, and its `retry-after` (if any) is worth honouring. */
function isBackOffStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

export type WebhookAttemptOutcome =
  { kind: "response"; status: number; retryAfter?: string | null } | { kind: "network_error" };

export type WebhookRetryDecision =
  | { action: "delivered" }
  | { action: "disable_endpoint" }
  | { action: "retry"; nextAttempt: number; delayMs: number; retryAt: number }
  | { action: "dead_letter" };

export interface WebhookAttemptResult {
  /** 1-based number of the attempt that just finished. */
  attempt: number;
  outcome: WebhookAttemptOutcome;
  /** Epoch milliseconds when the attempt finished. */
  now: number;
  /** Uniform in [0, 1); injected so tests can pin the jitter. */
  random?: () => number;
  /** Scales every delay (schedule and `retry-after`); 0.001 turns the 3.5-day schedule into ~5 minutes for tests. */
  compression?: number;
}

/** Decides what follows one delivery attempt: done, disable the endpoint, retry later, or dead-letter. */
export function planWebhookRetry(result: WebhookAttemptResult): WebhookRetryDecision {
  const { attempt, outcome, now, random = Math.random, compression = 1 } = result;
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error("attempt must be a positive integer");
  if (outcome.kind === "response") {
    if (outcome.status >= 200 && outcome.status < 300) return { action: "delivered" };
    // 410 Gone is the receiver saying "stop": retrying would only hammer a deliberately removed endpoint.
    if (outcome.status === 410) return { action: "disable_endpoint" };
  }
  const nextDelay = WEBHOOK_RETRY_SCHEDULE_MS[attempt];
  if (nextDelay === undefined) return { action: "dead_letter" };
  const jitter = 1 + (random() * 2 - 1) * WEBHOOK_RETRY_JITTER;
  let delayMs = nextDelay * jitter;
  if (outcome.kind === "response" && isBackOffStatus(outcome.status) && outcome.retryAfter) {
    const askedMs = parseRetryAfterMs(outcome.retryAfter, now);
    if (askedMs !== undefined && askedMs > delayMs) delayMs = askedMs;
  }
  delayMs = Math.round(delayMs * compression);
  return { action: "retry", nextAttempt: attempt + 1, delayMs, retryAt: now + delayMs };
}

/** Longest `retry-after` we honour: a receiver cannot park a delivery beyond the schedule's longest step. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** `retry-after` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
export function parseRetryAfterMs(value: string, now: number): number | undefined {
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // Only IMF-fixdate (what RFC 9110 senders must emit): Date.parse alone would read "-5" as the year 5 BC.
    if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
    const date = Date.parse(text);
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}
