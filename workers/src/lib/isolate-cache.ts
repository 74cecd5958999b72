/**
 * What one isolate remembers of a database for a short while, shared by its requests (and, in workerd, by the
 * Durable Objects it hosts). A change made through this isolate clears it at once (see {@link clearedAfter}); one
 * made through another isolate reaches this one within `ttlMs`. Bounded: past `maxEntries` the oldest go first.
 */
export class IsolateCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(now: () => number, ttlMs: number, maxEntries = 1_000) {
    this.#now = now;
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  read(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > this.#now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  write(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** `write`, clearing `cache` once it settled (also when it failed: it may have landed). */
export function clearedAfter<A extends unknown[], R>(
  cache: { clear(): void },
  write: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    try {
      return await write(...args);
    } finally {
      cache.clear();
    }
  };
}
