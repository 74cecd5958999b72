import { describe, expect, it } from "vitest";
import {
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_SCHEDULE_MS,
  parseRetryAfterMs,
  planWebhookRetry,
  type WebhookAttemptOutcome,
} from "../../workers/src/webhooks/plan-webhook-retry.ts";

const NOW = Date.UTC(2026, 0, 1);
const middle = () => 0.5; // zero jitter
const status = (code: number, retryAfter?: string): WebhookAttemptOutcome => ({
  kind: "response",
  status: code,
  retryAfter: retryAfter ?? null,
});
const plan = (attempt: number, outcome: WebhookAttemptOutcome, random = middle, compression = 1) =>
  planWebhookRetry({ attempt, outcome, now: NOW, random, compression });

describe("planWebhookRetry", () => {
  it("follows the Standard Webhooks schedule: now, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h", () => {
    const minutes = WEBHOOK_RETRY_SCHEDULE_MS.map((ms) => ms / 60_000);
    expect(minutes).toEqual([0, 5 / 60, 5, 30, 120, 300, 600, 840, 1200, 1440]);
    const delays = [];
    for (let attempt = 1; attempt < WEBHOOK_MAX_ATTEMPTS; attempt++) {
      const decision = plan(attempt, status(500));
      expect(decision).toMatchObject({ action: "retry", nextAttempt: attempt + 1 });
      if (decision.action === "retry") delays.push(decision.delayMs);
    }
    expect(delays).toEqual(WEBHOOK_RETRY_SCHEDULE_MS.slice(1));
  });

  it("keeps jitter within ±20 % of each step", () => {
    for (let attempt = 1; attempt < WEBHOOK_MAX_ATTEMPTS; attempt++) {
      const base = WEBHOOK_RETRY_SCHEDULE_MS[attempt] ?? 0;
      const low = plan(attempt, { kind: "network_error" }, () => 0);
      const high = plan(attempt, { kind: "network_error" }, () => 0.999_999);
      expect(low).toMatchObject({ delayMs: Math.round(base * 0.8) });
      if (high.action !== "retry") throw new Error("expected a retry");
      expect(high.delayMs).toBeLessThanOrEqual(Math.round(base * 1.2));
      expect(high.delayMs).toBeGreaterThan(Math.round(base * 1.19));
    }
  });

  it("compresses the whole schedule for tests", () => {
    expect(plan(9, status(500), middle, 0.001)).toEqual({
      action: "retry",
      nextAttempt: 10,
      delayMs: 86_400,
      retryAt: NOW + 86_400,
    });
  });

  it("stops on 2xx, disables on 410, dead-letters after the last attempt", () => {
    expect(plan(1, status(200))).toEqual({ action: "delivered" });
    expect(plan(3, status(204))).toEqual({ action: "delivered" });
    expect(plan(2, status(410))).toEqual({ action: "disable_endpoint" });
    expect(plan(WEBHOOK_MAX_ATTEMPTS, status(410))).toEqual({ action: "disable_endpoint" });
    expect(plan(WEBHOOK_MAX_ATTEMPTS, status(500))).toEqual({ action: "dead_letter" });
    expect(plan(WEBHOOK_MAX_ATTEMPTS, { kind: "network_error" })).toEqual({ action: "dead_letter" });
    expect(() => plan(0, status(500))).toThrow(/attempt/);
  });

  it("retries other failures, including redirects and client errors, on the schedule", () => {
    for (const code of [301, 400, 401, 404, 500])
      expect(plan(2, status(code))).toMatchObject({ delayMs: 300_000 });
  });

  it("honours retry-after on 429 and 5xx only when it is later than the schedule", () => {
    for (const code of [429, 500, 502, 503, 504])
      expect(plan(2, status(code, "900"))).toMatchObject({ delayMs: 900_000 });
    expect(plan(2, status(429, "60"))).toMatchObject({ delayMs: 300_000 });
    for (const code of [400, 404, 301])
      expect(plan(2, status(code, "900"))).toMatchObject({ delayMs: 300_000 });
    const httpDate = new Date(NOW + 3_600_000).toUTCString();
    expect(plan(2, status(503, httpDate))).toMatchObject({ delayMs: 3_600_000, retryAt: NOW + 3_600_000 });
    expect(plan(2, status(503, "soon"))).toMatchObject({ delayMs: 300_000 });
    expect(plan(2, status(429, "900"), middle, 0.001)).toMatchObject({ delayMs: 900 });
  });
});

describe("parseRetryAfterMs", () => {
  it("reads seconds and HTTP dates, clamps to [0, 24 h], and ignores junk", () => {
    expect(parseRetryAfterMs("120", NOW)).toBe(120_000);
    expect(parseRetryAfterMs(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30_000);
    expect(parseRetryAfterMs(new Date(NOW - 30_000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfterMs("31536000", NOW)).toBe(86_400_000);
    expect(parseRetryAfterMs("-5", NOW)).toBeUndefined();
    expect(parseRetryAfterMs("later", NOW)).toBeUndefined();
  });
});
