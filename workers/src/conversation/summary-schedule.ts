/**
 * When the next turn needs the previous turn's summary (the `bounded` summary wait), or whether it gets an
 * interim line instead (the `interim` one, see views-reducer.ts). The summary hop runs after the answer, outside the
 * conversation's turn queue, so a client that sends its next message the moment an answer ends does not wait
 * for it. Only one summary can still reach the views in full: that of the latest turn, and only while no later
 * turn has started (its user line would sit after the summary's place; see `applySummary`). So the next turn
 * waits for it only when its specialist would see it: a turn routed to the specialist that answered the
 * previous turn never does (a specialist sees its own turns in full), one routed to another specialist waits
 * for that one summary, at most the summary hop's own time bound. A summary that lands later still reaches
 * every view's compact form of its turn.
 */
export class SummarySchedule {
  /** The summary of the latest answered turn, while it runs. */
  #latest: { turnId: string; adapter: string; landed: Promise<void> } | undefined;
  readonly #running = new Set<Promise<void>>();
  /** Per adapter, the last summary added: the next one's hop goes out once it has settled. */
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Resolves when `adapter`'s previous summary in this conversation has settled, so a summary's hop goes out
   * then (its prompt is read before). Why: at the node every summary of one conversation and adapter runs on
   * the same KV slot, one at a time, and a summary yields to routes and answers; a client that sends turns back
   * to back queued one hop per turn there, and past the node's queue bound they were refused as `overloaded`
   * (9 of 20 in `bench:edge`'s burst) and lost. Held here instead, each waits its turn and none is refused.
   * Ask before {@link add} records this turn's summary, which becomes the next one's turn.
   */
  turnFor(adapter: string): Promise<void> {
    return this.#tails.get(adapter) ?? Promise.resolve();
  }

  /** Records that `turnId`'s summary (written for `adapter`'s turn) is running until `work` settles. */
  add(turnId: string, adapter: string, work: Promise<unknown>): void {
    const landed = work.then(
      () => undefined,
      () => undefined,
    );
    const entry = { turnId, adapter, landed };
    this.#latest = entry;
    this.#running.add(landed);
    this.#tails.set(adapter, landed);
    void landed.then(() => {
      this.#running.delete(landed);
      if (this.#latest === entry) this.#latest = undefined;
      if (this.#tails.get(adapter) === landed) this.#tails.delete(adapter);
    });
  }

  /**
   * The latest answered turn's summary is still running: neither `summary` nor `summary_failed` is in the
   * timeline yet (asked of the timeline, which the summary's append reaches a few microtasks before `landed`).
   */
  running(timeline: { readTurn(turnId: string): ReadonlyArray<{ type: string }> }): boolean {
    const latest = this.#latest;
    if (!latest) return false;
    return !timeline.readTurn(latest.turnId).some((e) => e.type === "summary" || e.type === "summary_failed");
  }

  /** A later turn's user line is in the views: the running summary can no longer reach them in full. */
  clear(): void {
    this.#latest = undefined;
  }

  /**
   * Waits until the summary that a turn answered by `adapter` would see has landed, or `limitMs` passed.
   * Resolves to the ms waited, or undefined when there was nothing to wait for (no summary running, or the
   * previous turn was `adapter`'s own).
   */
  async waitFor(adapter: string, limitMs: number, now: () => number): Promise<number | undefined> {
    const latest = this.#latest;
    if (!latest || latest.adapter === adapter) return undefined;
    const started = now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limitMs);
    });
    try {
      await Promise.race([latest.landed, bound]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    return Math.max(0, now() - started);
  }

  /** Settles once every running summary has (before a delete, say, so none lands after it). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}
