import type { NodeLoad } from "../../../schema/wire/v2/index.ts";

/** Prefills shorter than this are mostly per-call overhead and would understate the rate. */
const MIN_TIMED_PREFILL_TOKENS = 32;
/** Weight of the newest prefill in the running mean. */
const PREFILL_RATE_SMOOTHING = 0.2;

/**
 * The node's prefill rate, for the heartbeat's `load`: what lets the edge weigh a warm cache (few tokens to
 * evaluate) against a busy node. A hop that shared the engine with k others saw about 1/(k+1) of it, so its rate
 * is scaled by the hops in flight when it ran: the figure is the engine's, not one hop's share.
 */
export class NodeLoadMeter {
  /** Undefined until the node timed a prefill: an assumed rate would rank a fresh node against measured ones. */
  #prefillTokensPerSecond: number | undefined;

  /** One hop's prefill: `evaluatedTokens` in `prefillMs`, while `sharing` hops (itself included) were in flight. */
  recordPrefill(evaluatedTokens: number, prefillMs: number, sharing: number): void {
    if (evaluatedTokens < MIN_TIMED_PREFILL_TOKENS || prefillMs <= 0) return;
    const rate = ((evaluatedTokens * 1000) / prefillMs) * Math.max(1, sharing);
    const previous = this.#prefillTokensPerSecond ?? rate;
    this.#prefillTokensPerSecond = previous + PREFILL_RATE_SMOOTHING * (rate - previous);
  }

  /** The heartbeat's `load`; none before the first timed prefill (the edge then assumes the fleet's best). */
  describe(hopMs: number): NodeLoad | undefined {
    if (this.#prefillTokensPerSecond === undefined) return undefined;
    return {
      prefillTokensPerSecond: Math.max(0.1, Math.round(this.#prefillTokensPerSecond * 10) / 10),
      hopMs: Math.round(hopMs),
    };
  }
}
