/** A token bucket's state: JSON-serialisable, so a Durable Object can persist it between requests. */
export interface TokenBucket {
  capacity: number;
  /** Tokens added per millisecond (capacity per minute / 60,000 for per-minute limits). */
  refillPerMs: number;
  level: number;
  /** Unix ms of the last refill. */
  updatedAt: number;
}

export function createTokenBucket(capacity: number, windowMs: number, now: number): TokenBucket {
  return { capacity, refillPerMs: capacity / windowMs, level: capacity, updatedAt: now };
}

/** The bucket refilled up to `now` (never above capacity). */
export function refillTokenBucket(bucket: TokenBucket, now: number): TokenBucket {
  const elapsed = Math.max(0, now - bucket.updatedAt);
  return {
    ...bucket,
    level: Math.min(bucket.capacity, bucket.level + elapsed * bucket.refillPerMs),
    updatedAt: now,
  };
}

/** Milliseconds until the bucket holds `amount` again (0 when it already does). */
export function msUntilTokenBucketHolds(bucket: TokenBucket, amount: number): number {
  if (bucket.level >= amount) return 0;
  return Math.ceil((amount - bucket.level) / bucket.refillPerMs);
}

/** Milliseconds until the bucket is full again: what `x-ratelimit-reset-*` reports. */
export function msUntilTokenBucketFull(bucket: TokenBucket): number {
  return Math.ceil((bucket.capacity - bucket.level) / bucket.refillPerMs);
}
