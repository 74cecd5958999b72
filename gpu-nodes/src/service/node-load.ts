import type { NodeLoad } from "../../../schema/wire/v1/index.ts";

/** Assumed until the node has timed a prefill: a small model on a few CPU threads. */
export const INITIAL_PREFILL_TOKENS_PER_SECOND = 500;
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
  #prefillTokensPerSecond = INITIAL_PREFILL_TOKENS_PER_SECOND;

  /** One hop's prefill: `evaluatedTokens` in `prefillMs`, while `sharing` hops (itself included) were in flight. */
  recordPrefill(evaluatedTokens: number, prefillMs: number, sharing: number): void {
    if (evaluatedTokens < MIN_TIMED_PREFILL_TOKENS || prefillMs <= 0) return;
    const rate = ((evaluatedTokens * 1000) / prefillMs) * Math.max(1, sharing);
    this.#prefillTokensPerSecond += PREFILL_RATE_SMOOTHING * (rate - this.#prefillTokensPerSecond);
  }

  describe(hopMs: number): NodeLoad {
    return {
      prefillTokensPerSecond: Math.max(0.1, Math.round(this.#prefillTokensPerSecond * 10) / 10),
      hopMs: Math.round(hopMs),
    };
  }
}
