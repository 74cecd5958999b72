import { OverloadedError } from "../../../schema/wire/v2/index.ts";

/** The queue every hop without a tenant id shares (older edges, direct wire clients). */
export const ANONYMOUS_TENANT = "anonymous";
/** Hops that may wait per admitted slot when MOL_MAX_QUEUED is unset. */
export const DEFAULT_QUEUED_PER_SLOT = 16;
/** Bounds of the `retryAfterMs` hint: never "retry now", never "come back in a minute". */
const RETRY_AFTER_MIN_MS = 250;
const RETRY_AFTER_MAX_MS = 30_000;
/** Assumed hop time until the node has timed one. */
const INITIAL_SERVICE_MS = 1_000;
/** Weight of the newest hop in the running mean of hop times. */
const SERVICE_MS_SMOOTHING = 0.2;

export interface AdmissionOptions {
  /** Hops that run at once (MOL_MAX_CONCURRENT); route and answer hops only when summaries have their own lane. */
  maxConcurrent: number;
  /**
   * Summary hops that run at once in a lane of their own, beside `maxConcurrent` route and answer hops
   * (MOL_MAX_CONCURRENT_SUMMARIES). Unset: summaries share `maxConcurrent` with the others, one queue.
   */
  maxConcurrentSummaries?: number | undefined;
  /** Hops that may wait, all tenants together (MOL_MAX_QUEUED); 0 refuses at once past `maxConcurrent`. */
  maxQueued: number;
  /** Cost credited to each waiting tenant per round (deficit round robin); one hop by default. */
  quantum?: number;
  /** Monotonic milliseconds, for the hop times behind `retryAfterMs`. */
  now?: () => number;
  /**
   * A hop starts waiting in a lane that summaries run in (theirs, or the one they share): the engine should stop
   * holding summaries back for latency hops, since each one paused keeps its admission (hop-priority.ts).
   */
  onWaitBehindSummaries?: (() => void) | undefined;
}

export interface AdmissionTicket {
  /** Absent: the shared {@link ANONYMOUS_TENANT} queue. */
  tenantId?: string | undefined;
  /** What the hop is charged against its tenant's share; 1 (a hop) unless weighted. */
  cost?: number;
  /** `summary`: the summary lane, when the node has one; route and answer hops are `turn` (the default). */
  lane?: AdmissionLane;
  /** Aborting it (the hop's deadline, a cancel from the edge) takes the hop out of the queue. */
  signal: AbortSignal;
}

export type AdmissionLane = "turn" | "summary";

/** Hops of one kind that run at once up to `maxConcurrent`, their tenants' queues served by deficit round robin. */
interface Lane {
  maxConcurrent: number;
  inFlight: number;
  /** Tenants with waiting hops, in round-robin order: the first is the one being served. */
  active: Map<string, TenantQueue>;
}

interface Waiter {
  lane: Lane;
  tenantId: string;
  cost: number;
  admit: () => void;
  refuse: (error: OverloadedError) => void;
}

interface TenantQueue {
  waiters: Waiter[];
  deficit: number;
  /** Whether this visit's quantum was added (a tenant keeps its turn while its deficit pays for its head). */
  credited: boolean;
}

/**
 * Admission to a node's engine: `maxConcurrent` hops run, the rest wait in one FIFO queue per tenant, served by
 * deficit round robin, until `maxQueued` hops wait; past that the node answers `overloaded` with `retryAfterMs`.
 *
 * Why here: the node is the one place that sees every tenant's hops for its engine (the edge is one Durable
 * Object per conversation and sees one conversation's), so only here can a tenant with a hundred queued hops be
 * kept from starving one with a single hop. Why queue at all: refusing at once past the limit turned a burst of
 * 64 turns on a 16-hop node into 53 failed turns, though the node drains such a burst in seconds. Why a bound:
 * past it a hop would wait longer than a retry on another node; the edge fails over on `overloaded`.
 *
 * Cost is one hop, not prompt tokens: a warm conversation re-evaluates only its new tokens, and which tokens
 * are warm is known only once the engine looks up the slot, after admission. When the queue is full, a tenant
 * holding fewer waiting hops than the longest queue's still gets in: the longest queue's newest hop is shed
 * instead (longest-queue drop), so the bound never shuts out the light tenant either.
 *
 * A waiting hop ends without running when its signal aborts: its deadline (`timeoutMs`, counted from arrival)
 * or a cancel from the edge; the abort reason is the typed error it then reports.
 *
 * The bound in conversations (docs/architecture.md, "The queue bound"): a conversation holds at most two hops here at once (its
 * route or answer, and the previous turn's summary), so no hop is refused while at most
 * (`maxConcurrent` + `maxQueued`) / 2 conversations use the node (a summary lane only adds room).
 *
 * The summary lane (`maxConcurrentSummaries`): summaries run after the answer, in the background, one per turn,
 * and each holds its slot for up to 192 tokens; sharing one limit, they filled every admission slot under load
 * and the next turns' routes and answers queued behind them. In their own lane a route or answer waits only for
 * other routes and answers; the queue bound stays one bound over both lanes.
 */
export class Admission {
  readonly maxConcurrent: number;
  readonly maxConcurrentSummaries: number | undefined;
  readonly maxQueued: number;
  readonly #quantum: number;
  readonly #now: () => number;
  readonly #turns: Lane;
  readonly #summaries: Lane;
  #queued = 0;
  #serviceMs = INITIAL_SERVICE_MS;
  readonly #onWaitBehindSummaries: (() => void) | undefined;

  constructor(options: AdmissionOptions) {
    this.maxConcurrent = options.maxConcurrent;
    this.maxConcurrentSummaries = options.maxConcurrentSummaries;
    this.maxQueued = options.maxQueued;
    this.#turns = { maxConcurrent: options.maxConcurrent, inFlight: 0, active: new Map() };
    this.#summaries =
      options.maxConcurrentSummaries === undefined
        ? this.#turns
        : { maxConcurrent: options.maxConcurrentSummaries, inFlight: 0, active: new Map() };
    this.#quantum = options.quantum ?? 1;
    this.#now = options.now ?? (() => performance.now());
    this.#onWaitBehindSummaries = options.onWaitBehindSummaries;
  }

  /** Hops admitted and not yet released, both lanes. */
  get inFlight(): number {
    return this.#turns.inFlight + (this.#summaries === this.#turns ? 0 : this.#summaries.inFlight);
  }
  /** Route and answer hops admitted and not yet released (summaries too when they share the lane). */
  get turnsInFlight(): number {
    return this.#turns.inFlight;
  }
  /** Hops waiting for admission, all tenants together. */
  get queued(): number {
    return this.#queued;
  }
  /** Running mean of the time an admitted hop holds its slot, ms (behind `retryAfterMs` and the heartbeat). */
  get serviceMs(): number {
    return this.#serviceMs;
  }
  /** Tenants with at least one waiting hop. */
  get queuedTenants(): number {
    return this.queuedByTenant().size;
  }

  /**
   * Resolves with the release function once the hop may run. Rejects with {@link OverloadedError} (with a
   * `retryAfterMs`) past the queue bound, or with the signal's reason when it aborts while waiting.
   */
  enter(ticket: AdmissionTicket): Promise<() => void> {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort reason is the hop's typed error
    if (ticket.signal.aborted) return Promise.reject(ticket.signal.reason);
    const lane = ticket.lane === "summary" ? this.#summaries : this.#turns;
    if (lane.inFlight < lane.maxConcurrent && lane.active.size === 0)
      return Promise.resolve(this.#start(lane));
    const tenantId = ticket.tenantId ?? ANONYMOUS_TENANT;
    if (this.#queued >= this.maxQueued && !this.#shedForLighter(tenantId)) {
      return Promise.reject(this.#overloaded());
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#take(waiter);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort reason is the hop's typed error, passed on as it is
        reject(ticket.signal.reason);
      };
      const waiter: Waiter = {
        lane,
        tenantId,
        cost: ticket.cost ?? 1,
        admit: () => {
          ticket.signal.removeEventListener("abort", onAbort);
          resolve(this.#start(lane));
        },
        refuse: (error) => {
          ticket.signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      ticket.signal.addEventListener("abort", onAbort, { once: true });
      const queue = lane.active.get(tenantId) ?? { waiters: [], deficit: 0, credited: false };
      queue.waiters.push(waiter);
      lane.active.set(tenantId, queue);
      this.#queued++;
      if (lane === this.#summaries) this.#onWaitBehindSummaries?.();
    });
  }

  /** Waiting hops by tenant, both lanes together, for metrics and tests. */
  queuedByTenant(): Map<string, number> {
    const byTenant = new Map<string, number>();
    for (const [tenant, queue] of this.#queues())
      byTenant.set(tenant, (byTenant.get(tenant) ?? 0) + queue.waiters.length);
    return byTenant;
  }

  /** Every tenant queue, of one lane or of both. */
  *#queues(): Generator<[string, TenantQueue]> {
    yield* this.#turns.active;
    if (this.#summaries !== this.#turns) yield* this.#summaries.active;
  }

  #start(lane: Lane): () => void {
    lane.inFlight++;
    const startedAt = this.#now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      lane.inFlight--;
      const tookMs = this.#now() - startedAt;
      this.#serviceMs += SERVICE_MS_SMOOTHING * (tookMs - this.#serviceMs);
      this.#dispatch(lane);
    };
  }

  /** Deficit round robin: the first tenant gets its quantum once per visit and runs hops while it pays for them. */
  #dispatch(lane: Lane): void {
    while (lane.inFlight < lane.maxConcurrent) {
      const next = lane.active.entries().next();
      if (next.done === true) return;
      const [tenantId, queue] = next.value;
      if (!queue.credited) {
        queue.deficit += this.#quantum;
        queue.credited = true;
      }
      const head = queue.waiters[0] as Waiter;
      if (head.cost > queue.deficit) {
        // Its turn is over: to the back of the round, keeping the deficit it has not spent.
        queue.credited = false;
        lane.active.delete(tenantId);
        lane.active.set(tenantId, queue);
        continue;
      }
      queue.deficit -= head.cost;
      this.#take(head);
      head.admit();
    }
  }

  /**
   * At the bound: makes room for `tenantId` by shedding the newest hop of the tenant holding the most waiting
   * hops (both lanes), if it holds more; from its longer lane queue, the summary one on a tie.
   */
  #shedForLighter(tenantId: string): boolean {
    const byTenant = this.queuedByTenant();
    let heaviest: [string, number] | undefined;
    for (const entry of byTenant) if (!heaviest || entry[1] > heaviest[1]) heaviest = entry;
    if (!heaviest || heaviest[1] <= (byTenant.get(tenantId) ?? 0) + 1) return false;
    let longest: TenantQueue | undefined;
    for (const [tenant, queue] of this.#queues()) {
      if (tenant === heaviest[0] && (!longest || queue.waiters.length >= longest.waiters.length))
        longest = queue;
    }
    const shed = longest?.waiters[longest.waiters.length - 1] as Waiter;
    this.#take(shed);
    shed.refuse(this.#overloaded());
    return true;
  }

  #take(waiter: Waiter): void {
    const queue = waiter.lane.active.get(waiter.tenantId);
    const index = queue?.waiters.indexOf(waiter) ?? -1;
    if (!queue || index < 0) return;
    queue.waiters.splice(index, 1);
    this.#queued--;
    // An emptied queue leaves the round; DRR forgets its deficit so idle tenants bank no credit.
    if (queue.waiters.length === 0) waiter.lane.active.delete(waiter.tenantId);
  }

  /** The wait until a hop arriving now would run: the queue ahead of it, drained `maxConcurrent` at a time. */
  #overloaded(): OverloadedError {
    const ahead = this.#queued + 1;
    const estimate = (ahead / this.maxConcurrent) * this.#serviceMs;
    const retryAfterMs = Math.round(Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, estimate)));
    const message =
      this.maxQueued === 0
        ? `node is at its limit of ${this.maxConcurrent} concurrent hops`
        : `node is at its limit of ${this.maxConcurrent} concurrent hops and ${this.maxQueued} queued`;
    return new OverloadedError(message, { retryAfterMs });
  }
}
