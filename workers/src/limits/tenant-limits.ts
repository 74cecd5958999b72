import {
  createTokenBucket,
  msUntilTokenBucketFull,
  msUntilTokenBucketHolds,
  refillTokenBucket,
  type TokenBucket,
} from "./token-bucket.ts";

const MINUTE_MS = 60_000;

export interface TenantLimitSettings {
  requestsPerMinute: number;
  tokensPerMinute: number;
  /** Tokens per calendar month (UTC). */
  monthlyTokens: number;
  /**
   * Writes that start no turn (creating or deleting conversations, managing webhook endpoints) per minute. A
   * bucket of their own, so managing resources never spends the turn budget; unset, it is `requestsPerMinute`.
   */
  writesPerMinute?: number;
}

export interface TenantLimitState {
  requests: TokenBucket;
  tokens: TokenBucket;
  /** Absent in state stored before writes were limited; created full on the next refresh. */
  writes?: TokenBucket;
  /** `YYYY-MM` of the month `monthTokens` counts. */
  month: string;
  monthTokens: number;
}

export type RateLimitHeaders = Record<string, string>;

export type Admission =
  | { ok: true; headers: RateLimitHeaders }
  | { ok: false; reason: "requests" | "tokens" | "quota"; retryAfterMs: number; headers: RateLimitHeaders };

export function createTenantLimitState(settings: TenantLimitSettings, now: number): TenantLimitState {
  return {
    requests: createTokenBucket(settings.requestsPerMinute, MINUTE_MS, now),
    tokens: createTokenBucket(settings.tokensPerMinute, MINUTE_MS, now),
    writes: createTokenBucket(writesPerMinute(settings), MINUTE_MS, now),
    month: monthOf(now),
    monthTokens: 0,
  };
}

/**
 * Admits one turn-creating request, or says why not. Tokens are charged after the turn from the hops' real
 * figures ({@link recordTenantTokens}), so the token bucket may go below zero; then requests wait until it refills.
 */
export function admitTenantRequest(
  state: TenantLimitState,
  settings: TenantLimitSettings,
  now: number,
): { state: TenantLimitState; admission: Admission } {
  const current = refresh(state, settings, now);
  if (current.monthTokens >= settings.monthlyTokens) {
    return {
      state: current,
      admission: {
        ok: false,
        reason: "quota",
        retryAfterMs: msUntilNextMonth(now),
        headers: headersOf(current),
      },
    };
  }
  const tokenWait = msUntilTokenBucketHolds(current.tokens, 1);
  if (tokenWait > 0) {
    return {
      state: current,
      admission: { ok: false, reason: "tokens", retryAfterMs: tokenWait, headers: headersOf(current) },
    };
  }
  const requestWait = msUntilTokenBucketHolds(current.requests, 1);
  if (requestWait > 0) {
    return {
      state: current,
      admission: { ok: false, reason: "requests", retryAfterMs: requestWait, headers: headersOf(current) },
    };
  }
  const next = { ...current, requests: { ...current.requests, level: current.requests.level - 1 } };
  return { state: next, admission: { ok: true, headers: headersOf(next) } };
}

/** Admits one write that starts no turn (its own bucket; tokens and quota do not apply), or says how long to wait. */
export function admitTenantWrite(
  state: TenantLimitState,
  settings: TenantLimitSettings,
  now: number,
): { state: TenantLimitState; admission: Admission } {
  const current = refresh(state, settings, now);
  const writes = current.writes as TokenBucket;
  const wait = msUntilTokenBucketHolds(writes, 1);
  if (wait > 0) {
    return {
      state: current,
      admission: { ok: false, reason: "requests", retryAfterMs: wait, headers: writeHeadersOf(writes) },
    };
  }
  const next = { ...current, writes: { ...writes, level: writes.level - 1 } };
  return { state: next, admission: { ok: true, headers: writeHeadersOf(next.writes) } };
}

/** Gives back an admitted request that was then refused (it stored nothing, so it costs nothing). */
export function refundTenantRequest(
  state: TenantLimitState,
  settings: TenantLimitSettings,
  now: number,
): TenantLimitState {
  const current = refresh(state, settings, now);
  return {
    ...current,
    requests: { ...current.requests, level: Math.min(current.requests.capacity, current.requests.level + 1) },
  };
}

/** Gives back an admitted write that was then refused as bad input. */
export function refundTenantWrite(
  state: TenantLimitState,
  settings: TenantLimitSettings,
  now: number,
): TenantLimitState {
  const current = refresh(state, settings, now);
  const writes = current.writes as TokenBucket;
  return { ...current, writes: { ...writes, level: Math.min(writes.capacity, writes.level + 1) } };
}

/** Charges the tokens a turn's hops really used (prompt + completion, every hop). */
export function recordTenantTokens(
  state: TenantLimitState,
  settings: TenantLimitSettings,
  tokens: number,
  now: number,
): TenantLimitState {
  const current = refresh(state, settings, now);
  return {
    ...current,
    tokens: { ...current.tokens, level: current.tokens.level - tokens },
    monthTokens: current.monthTokens + tokens,
  };
}

function refresh(state: TenantLimitState, settings: TenantLimitSettings, now: number): TenantLimitState {
  // Settings may change (a plan upgrade): resize the buckets, keeping how much of each is used.
  const resize = (bucket: TokenBucket, capacity: number) =>
    bucket.capacity === capacity
      ? bucket
      : {
          ...bucket,
          capacity,
          refillPerMs: capacity / MINUTE_MS,
          level: bucket.level + (capacity - bucket.capacity),
        };
  const month = monthOf(now);
  const writes = state.writes ?? createTokenBucket(writesPerMinute(settings), MINUTE_MS, now);
  return {
    requests: refillTokenBucket(resize(state.requests, settings.requestsPerMinute), now),
    tokens: refillTokenBucket(resize(state.tokens, settings.tokensPerMinute), now),
    writes: refillTokenBucket(resize(writes, writesPerMinute(settings)), now),
    month,
    monthTokens: month === state.month ? state.monthTokens : 0,
  };
}

function headersOf(state: TenantLimitState): RateLimitHeaders {
  return {
    "x-ratelimit-limit-requests": String(state.requests.capacity),
    "x-ratelimit-remaining-requests": String(Math.max(0, Math.floor(state.requests.level))),
    "x-ratelimit-reset-requests": formatDuration(msUntilTokenBucketFull(state.requests)),
    "x-ratelimit-limit-tokens": String(state.tokens.capacity),
    "x-ratelimit-remaining-tokens": String(Math.max(0, Math.floor(state.tokens.level))),
    "x-ratelimit-reset-tokens": formatDuration(msUntilTokenBucketFull(state.tokens)),
  };
}

/** The request headers of a write: the same names as a turn's, counting the writes bucket. */
function writeHeadersOf(writes: TokenBucket): RateLimitHeaders {
  return {
    "x-ratelimit-limit-requests": String(writes.capacity),
    "x-ratelimit-remaining-requests": String(Math.max(0, Math.floor(writes.level))),
    "x-ratelimit-reset-requests": formatDuration(msUntilTokenBucketFull(writes)),
  };
}

function writesPerMinute(settings: TenantLimitSettings): number {
  return settings.writesPerMinute ?? settings.requestsPerMinute;
}

/** OpenAI's reset format: `1s`, `6m0s`, `250ms`. */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, ms)}ms`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

function monthOf(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

function msUntilNextMonth(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - now;
}

/** One tenant's limits as the API sees them (a Durable Object per tenant in production: exact, not approximate). */
export interface TenantLimiter {
  admit(): Promise<Admission>;
  /** Takes one write (see {@link TenantLimitSettings.writesPerMinute}). */
  admitWrite(): Promise<Admission>;
  refundWrite(): Promise<void>;
  refund(): Promise<void>;
  record(tokens: number): Promise<void>;
  /** The tenant's limits: the deployment's defaults with this tenant's overrides (its plan) on top. */
  readLimits(): Promise<TenantLimitSettings>;
  /** Sets (or, with `null` values, clears) this tenant's overrides; returns the limits now in force. */
  setLimits(
    overrides: Partial<Record<keyof TenantLimitSettings, number | null>>,
  ): Promise<TenantLimitSettings>;
}
