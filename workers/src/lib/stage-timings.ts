/**
 * Where one request's time went, stage by stage: the edge sends it back as a `server-timing` header (W3C Server
 * Timing), which the edge bench reads to split a turn's overhead.
 *
 * Durations come from the runtime's clock. In workerd `Date.now()` and `performance.now()` advance only at I/O
 * (a Spectre mitigation), so a stage that waits on I/O (D1, a Durable Object call, a NATS round trip) is
 * measured in full, while a stage that is pure CPU between two I/O events (a synchronous SQLite write, a view
 * render, JSON encoding) reads 0 there and its time lands in the next stage that awaits I/O. Under Node (the
 * tests) every stage is measured.
 */
export type StageTimings = Record<string, number>;

/** A stage of the conversation object's share is sent as `object.<stage>` (see {@link prefixStages}). */
export const OBJECT_STAGE_PREFIX = "object.";

/** Adds up the time of named stages; a stage that runs more than once (a timeline write) accumulates. */
export class StageClock {
  readonly timings: StageTimings = {};
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  add(stage: string, ms: number): void {
    this.timings[stage] = (this.timings[stage] ?? 0) + ms;
  }

  async time<T>(stage: string, work: () => Promise<T>): Promise<T> {
    const started = this.#now();
    try {
      return await work();
    } finally {
      this.add(stage, this.#now() - started);
    }
  }

  timeSync<T>(stage: string, work: () => T): T {
    const started = this.#now();
    try {
      return work();
    } finally {
      this.add(stage, this.#now() - started);
    }
  }
}

/** `name;dur=ms` entries, comma-separated, durations to 0.1 ms. */
export function formatServerTiming(timings: StageTimings): string {
  return Object.entries(timings)
    .map(([stage, ms]) => `${stage};dur=${(Math.round(ms * 10) / 10).toString()}`)
    .join(", ");
}

/** The stages of a `server-timing` header value (entries without a duration are left out). */
export function parseServerTiming(header: string | null): StageTimings {
  const timings: StageTimings = {};
  for (const entry of (header ?? "").split(",")) {
    const [name, ...params] = entry.trim().split(";");
    const dur = params.map((p) => /^dur=([\d.]+)$/.exec(p.trim())?.[1]).find((v) => v !== undefined);
    if (name && dur !== undefined) timings[name] = Number(dur);
  }
  return timings;
}

export function prefixStages(timings: StageTimings, prefix: string): StageTimings {
  return Object.fromEntries(Object.entries(timings).map(([stage, ms]) => [`${prefix}${stage}`, ms]));
}
