/**
 * Latency-critical hops (route, answer) before summary hops, on one engine.
 *
 * Why: a turn's summary runs after its response, so a client that sends its next message at once gets that
 * message's route and answer decoding next to the summary. On a CPU node the two share the cores (and, on one
 * adapter context, llama.cpp batches the summary's prefill into the answer's decode steps), so the next turn
 * ran 1.33x slower than a paced one (test/bench/results/edge.md). A summary is read only by later views (an
 * interim line stands in meanwhile), so it can wait a little; the route and answer cannot.
 *
 * How: a summary's generation calls {@link BackgroundGeneration.pause} between tokens (an engine that cannot
 * pause mid-generation calls it once, before its request). It resolves at once while no latency generation is
 * active on the engine, and otherwise when the last one has ended (and `resumeAfterIdleMs` passed without a new
 * one). That idle time covers the gaps of a client writing at once: a few ms of NATS and edge work between a turn's
 * route and its answer, ~25 ms of client and edge work between one turn's answer and the next turn's route here.
 * A summary prefill started in such a gap cannot stop for the route that follows (one llama.cpp batch), so 25 ms
 * was too short; a summary resumed 100 ms late costs nothing anyone waits for. Scope is the whole engine, not one
 * adapter context: every context decodes on the same threads.
 *
 * Bounded starvation: a summary stops pausing once it was paused `maxDeferralMs` in all (or its own, smaller bound:
 * half the time left before its hop's deadline, so it always keeps the other half to run in), or as soon as
 * holding it back would hold something else up: another hop queues for its KV slot ({@link HopPriority.hurry}),
 * finds every slot of its pool busy ({@link HopPriority.hurryPool}), or waits for node admission that paused
 * summaries hold ({@link HopPriority.hurrySummaries}). So a long bound costs nothing under load, where summaries
 * run at once as before; it only lets an otherwise idle node keep a conversation's summaries out of the way of
 * that conversation's back-to-back turns for as long as it may (bench:edge on SmolLM2: with a 2 s bound a 20-turn
 * burst ran 1.41-1.67x slower than paced turns, as summaries aged out mid-burst and decoded beside its answers;
 * 1.18-1.23x with this). Pausing never drops or reorders a summary: it only stretches its decode; the edge orders
 * the results as before.
 */

export interface HopPriorityOptions {
  /** false: summaries never pause (MOL_SUMMARY_YIELD=0). */
  enabled: boolean;
  /** Most time one summary generation spends paused, in all (MOL_SUMMARY_MAX_DEFERRAL_MS). */
  maxDeferralMs: number;
  /** Quiet time after the last latency generation before paused summaries resume. */
  resumeAfterIdleMs: number;
  now: () => number;
}

export const DEFAULT_HOP_PRIORITY: Omit<HopPriorityOptions, "now"> = {
  enabled: true,
  maxDeferralMs: 15_000,
  resumeAfterIdleMs: 100,
};

export interface HopPriorityStats {
  /** Latency generations (route, answer) running now. */
  latencyActive: number;
  /** Summary generations paused now. */
  paused: number;
  /** Pauses so far (one summary may pause many times). */
  pauses: number;
  /** Time summaries spent paused so far, ms. */
  deferredMs: number;
  /** Summaries that reached their deferral bound and ran on unpaused. */
  agedOut: number;
}

export interface BackgroundGeneration {
  /** Resolves when the generation may decode its next token; rejects with the signal's reason on abort. */
  pause(signal: AbortSignal): Promise<void>;
  /** Another hop has queued for its slot ({@link HopPriority.hurry}). */
  readonly hurried: boolean;
  /** Ends the generation's registration (so {@link HopPriority.hurry} forgets it). */
  end(): void;
}

interface Background {
  key: string;
  /** The slot pool its KV slot is lent from ({@link HopPriority.hurryPool}). */
  pool: unknown;
  /** This generation's own bound on time paused, in all (never above the engine's). */
  maxDeferralMs: number;
  /** In the summary figures of {@link HopPriority.stats}: false for other background work. */
  counted: boolean;
  deferredMs: number;
  hurried: boolean;
  wake: (() => void) | undefined;
}

export class HopPriority {
  readonly #options: HopPriorityOptions;
  readonly #running = new Set<Background>();
  #latency = 0;
  #open = true;
  #reopen: ReturnType<typeof setTimeout> | undefined;
  readonly #stats = { pauses: 0, deferredMs: 0, agedOut: 0 };

  constructor(options: HopPriorityOptions) {
    this.#options = options;
  }

  /** Routes and answers running now. */
  get latencyActive(): number {
    return this.#latency;
  }

  stats(): HopPriorityStats {
    let paused = 0;
    for (const b of this.#running) if (b.wake && b.counted) paused++;
    return { latencyActive: this.#latency, paused, ...this.#stats };
  }

  /** Marks a latency generation as running; call the result when it ends. */
  beginLatency(): () => void {
    this.#latency++;
    this.#open = false;
    clearTimeout(this.#reopen);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#latency--;
      if (this.#latency > 0) return;
      this.#reopen = setTimeout(() => {
        if (this.#latency === 0) this.#openGate();
      }, this.#options.resumeAfterIdleMs);
      this.#reopen.unref();
    };
  }

  /**
   * Registers a summary generation, or other background work on a slot (a route slot's view extension, see
   * create-llama-engine.ts); `key` names the KV slot it holds (adapter, lane, conversation).
   */
  beginBackground(
    key: string,
    options: { counted?: boolean; pool?: unknown; maxDeferralMs?: number | undefined } = {},
  ): BackgroundGeneration {
    const background: Background = {
      key,
      pool: options.pool,
      maxDeferralMs: Math.min(this.#options.maxDeferralMs, options.maxDeferralMs ?? Infinity),
      counted: options.counted ?? true,
      deferredMs: 0,
      hurried: false,
      wake: undefined,
    };
    this.#running.add(background);
    return {
      pause: (signal) => this.#pause(background, signal),
      get hurried() {
        return background.hurried;
      },
      end: () => {
        background.wake?.();
        this.#running.delete(background);
      },
    };
  }

  /** Another hop queues for the slot `key` names: summaries holding it stop pausing (and resume now). */
  hurry(key: string): void {
    this.#hurryWhere((b) => b.key === key);
  }

  /** A hop finds every slot of `pool` busy: the summaries holding its slots stop pausing. */
  hurryPool(pool: unknown): void {
    this.#hurryWhere((b) => b.counted && b.pool === pool);
  }

  /** A hop waits for node admission that summaries hold too: every summary stops pausing. */
  hurrySummaries(): void {
    this.#hurryWhere((b) => b.counted);
  }

  #hurryWhere(match: (b: Background) => boolean): void {
    for (const b of this.#running) {
      if (!match(b)) continue;
      b.hurried = true;
      b.wake?.();
    }
  }

  #openGate(): void {
    this.#open = true;
    for (const b of this.#running) b.wake?.();
  }

  async #pause(b: Background, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const budget = b.maxDeferralMs - b.deferredMs;
    if (!this.#options.enabled || this.#open || b.hurried || budget <= 0) return;
    const started = this.#options.now();
    if (b.counted) this.#stats.pauses++;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => b.wake?.(), budget);
        const onAbort = (): void => {
          b.wake = undefined;
          clearTimeout(timer);
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort reason is the hop's typed error
          reject(signal.reason);
        };
        b.wake = () => {
          b.wake = undefined;
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        signal.addEventListener("abort", onAbort, { once: true });
      });
    } finally {
      const paused = this.#options.now() - started;
      b.deferredMs += paused;
      if (b.counted) {
        this.#stats.deferredMs += paused;
        if (b.deferredMs >= b.maxDeferralMs) this.#stats.agedOut++;
      }
    }
  }
}
