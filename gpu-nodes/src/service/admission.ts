import { OverloadedError } from "../../../schema/wire/v1/index.ts";

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
  /** Hops that run at once (MOL_MAX_CONCURRENT). */
  maxConcurrent: number;
  /** Hops that may wait, all tenants together (MOL_MAX_QUEUED); 0 refuses at once past `maxConcurrent`. */
  maxQueued: number;
  /** Cost credited to each waiting tenant per round (deficit round robin); one hop by default. */
  quantum?: number;
  /** Monotonic milliseconds, for the hop times behind `retryAfterMs`. */
  now?: () => number;
}

export interface AdmissionTicket {
  /** Absent: the shared {@link ANONYMOUS_TENANT} queue. */
  tenantId?: string | undefined;
  /** What the hop is charged against its tenant's share; 1 (a hop) unless weighted. */
  cost?: number;
  /** Aborting it (the hop's deadline, a cancel from the edge) takes the hop out of the queue. */
  signal: AbortSignal;
}

interface Waiter {
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
 * The bound in conversations (README, "The queue bound"): a conversation holds at most two hops here at once (its
 * route or answer, and the previous turn's summary), so no hop is refused while at most
 * (`maxConcurrent` + `maxQueued`) / 2 conversations use the node.
 */
export class Admission {
  readonly maxConcurrent: number;
  readonly maxQueued: number;
  readonly #quantum: number;
  readonly #now: () => number;
  /** Tenants with waiting hops, in round-robin order: the first is the one being served. */
  readonly #active = new Map<string, TenantQueue>();
  #inFlight = 0;
  #queued = 0;
  #serviceMs = INITIAL_SERVICE_MS;

  constructor(options: AdmissionOptions) {
    this.maxConcurrent = options.maxConcurrent;
    this.maxQueued = options.maxQueued;
    this.#quantum = options.quantum ?? 1;
    this.#now = options.now ?? (() => performance.now());
  }

  get inFlight(): number {
    return this.#inFlight;
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
    return this.#active.size;
  }

  /**
   * Resolves with the release function once the hop may run. Rejects with {@link OverloadedError} (with a
   * `retryAfterMs`) past the queue bound, or with the signal's reason when it aborts while waiting.
   */
  enter(ticket: AdmissionTicket): Promise<() => void> {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort reason is the hop's typed error
    if (ticket.signal.aborted) return Promise.reject(ticket.signal.reason);
    if (this.#inFlight < this.maxConcurrent && this.#queued === 0) return Promise.resolve(this.#start());
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
        tenantId,
        cost: ticket.cost ?? 1,
        admit: () => {
          ticket.signal.removeEventListener("abort", onAbort);
          resolve(this.#start());
        },
        refuse: (error) => {
          ticket.signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      ticket.signal.addEventListener("abort", onAbort, { once: true });
      const queue = this.#active.get(tenantId) ?? { waiters: [], deficit: 0, credited: false };
      queue.waiters.push(waiter);
      this.#active.set(tenantId, queue);
      this.#queued++;
    });
  }

  /** Waiting hops by tenant, for metrics and tests. */
  queuedByTenant(): Map<string, number> {
    return new Map([...this.#active].map(([tenant, queue]) => [tenant, queue.waiters.length]));
  }

  #start(): () => void {
    this.#inFlight++;
    const startedAt = this.#now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      const tookMs = this.#now() - startedAt;
      this.#serviceMs += SERVICE_MS_SMOOTHING * (tookMs - this.#serviceMs);
      this.#dispatch();
    };
  }

  /** Deficit round robin: the first tenant gets its quantum once per visit and runs hops while it pays for them. */
  #dispatch(): void {
    while (this.#inFlight < this.maxConcurrent) {
      const next = this.#active.entries().next();
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
        this.#active.delete(tenantId);
        this.#active.set(tenantId, queue);
        continue;
      }
      queue.deficit -= head.cost;
      this.#take(head);
      head.admit();
    }
  }

  /** At the bound: makes room for `tenantId` by shedding the newest hop of a tenant holding more, if any. */
  #shedForLighter(tenantId: string): boolean {
    const own = this.#active.get(tenantId)?.waiters.length ?? 0;
    let longest: TenantQueue | undefined;
    for (const queue of this.#active.values()) {
      if (!longest || queue.waiters.length > longest.waiters.length) longest = queue;
    }
    if (!longest || longest.waiters.length <= own + 1) return false;
    const shed = longest.waiters[longest.waiters.length - 1] as Waiter;
    this.#take(shed);
    shed.refuse(this.#overloaded());
    return true;
  }

  #take(waiter: Waiter): void {
    const queue = this.#active.get(waiter.tenantId);
    const index = queue?.waiters.indexOf(waiter) ?? -1;
    if (!queue || index < 0) return;
    queue.waiters.splice(index, 1);
    this.#queued--;
    // An emptied queue leaves the round; DRR forgets its deficit so idle tenants bank no credit.
    if (queue.waiters.length === 0) this.#active.delete(waiter.tenantId);
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
