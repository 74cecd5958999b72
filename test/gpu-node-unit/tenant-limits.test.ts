import { describe, expect, it } from "vitest";
import {
  admitTenantRequest,
  admitTenantWrite,
  refundTenantWrite,
  createTenantLimitState,
  recordTenantTokens,
  refundTenantRequest,
} from "../../workers/src/limits/tenant-limits.ts";

const settings = { requestsPerMinute: 3, tokensPerMinute: 1_000, monthlyTokens: 5_000 };
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

describe("tenant limits", () => {
  it("admits requests up to the per-minute limit, then tells how long to wait", () => {
    let state = createTenantLimitState(settings, T0);
    for (let i = 0; i < 3; i++) {
      const { state: next, admission } = admitTenantRequest(state, settings, T0);
      expect(admission.ok).toBe(true);
      expect(admission.headers["x-ratelimit-remaining-requests"]).toBe(String(2 - i));
      state = next;
    }
    const refused = admitTenantRequest(state, settings, T0).admission;
    expect(refused).toMatchObject({ ok: false, reason: "requests", retryAfterMs: 20_000 });
    expect(admitTenantRequest(state, settings, T0 + 20_000).admission.ok).toBe(true);
  });

  it("charges real tokens after the fact and refuses while the token bucket is below zero", () => {
    let state = createTenantLimitState(settings, T0);
    state = recordTenantTokens(state, settings, 1_500, T0);
    const refused = admitTenantRequest(state, settings, T0).admission;
    expect(refused).toMatchObject({ ok: false, reason: "tokens" });
    if (!refused.ok) expect(refused.retryAfterMs).toBe(30_060);
    expect(admitTenantRequest(state, settings, T0 + 31_000).admission.ok).toBe(true);
  });

  it("refunds a request that was refused after admission", () => {
    let state = admitTenantRequest(createTenantLimitState(settings, T0), settings, T0).state;
    state = refundTenantRequest(state, settings, T0);
    expect(admitTenantRequest(state, settings, T0).admission.headers["x-ratelimit-remaining-requests"]).toBe(
      "2",
    );
  });

  it("enforces the monthly quota until the next calendar month", () => {
    let state = createTenantLimitState(settings, T0);
    for (let minute = 0; minute < 5; minute++)
      state = recordTenantTokens(state, settings, 1_000, T0 + minute * 60_000);
    const refused = admitTenantRequest(state, settings, T0 + 10 * 60_000).admission;
    expect(refused).toMatchObject({ ok: false, reason: "quota" });
    expect(admitTenantRequest(state, settings, Date.UTC(2026, 11, 1, 0, 0, 1)).admission.ok).toBe(true);
  });
});

describe("tenant write limits", () => {
  it("counts writes in a bucket of their own, with the request headers of that bucket", () => {
    const limits = { ...settings, writesPerMinute: 2 };
    let state = createTenantLimitState(limits, T0);
    for (let i = 0; i < 2; i++) {
      const { state: next, admission } = admitTenantWrite(state, limits, T0);
      expect(admission).toMatchObject({ ok: true, headers: { "x-ratelimit-limit-requests": "2" } });
      state = next;
    }
    expect(admitTenantWrite(state, limits, T0).admission).toMatchObject({
      ok: false,
      reason: "requests",
      retryAfterMs: 30_000,
      headers: { "x-ratelimit-remaining-requests": "0" },
    });
    // Turns still have their whole bucket; a refunded write can be spent again.
    expect(admitTenantRequest(state, limits, T0).admission).toMatchObject({ ok: true });
    state = refundTenantWrite(state, limits, T0);
    expect(admitTenantWrite(state, limits, T0).admission.ok).toBe(true);
  });

  it("defaults the writes bucket to the requests limit, also for state stored before it existed", () => {
    const { writes: _writes, ...stored } = createTenantLimitState(settings, T0);
    const { admission } = admitTenantWrite(stored, settings, T0);
    expect(admission).toMatchObject({ ok: true, headers: { "x-ratelimit-limit-requests": "3" } });
  });
});
