import { OverloadedError } from "../../../../schema/wire/v2/index.ts";

/** A KV slot (one engine sequence) lent to one request of one conversation. */
export interface SlotLease<S> {
  readonly slot: S;
  /** True when the slot last held another conversation: only a shared prefix (if any) is reusable. */
  readonly rebound: boolean;
  release(): void;
}

interface SlotState<S> {
  slot: S;
  conversationId: string | undefined;
  busy: boolean;
  lastUsed: number;
}

interface Waiter<S> {
  conversationId: string;
  resolve: (lease: SlotLease<S>) => void;
  reject: (error: unknown) => void;
}

/**
 * Binds a fixed set of KV slots to conversations. A conversation keeps its slot (and so its KV) until the
 * least-recently-used policy hands that slot to another conversation. Requests that find every slot busy wait
 * in FIFO order, up to `maxWaiting`; beyond that they are refused with `overloaded` at once.
 */
export class SlotPool<S> {
  readonly #states: SlotState<S>[];
  readonly #waiters: Waiter<S>[] = [];
  #maxWaiting: number;
  #clock = 0;

  constructor(slots: readonly S[], options: { maxWaiting: number }) {
    this.#states = slots.map((slot) => ({ slot, conversationId: undefined, busy: false, lastUsed: 0 }));
    this.#maxWaiting = options.maxWaiting;
  }

  get total(): number {
    return this.#states.length;
  }
  get free(): number {
    return this.#states.filter((s) => !s.busy).length;
  }
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Adds slots (and room for `maxWaiting` more waiting requests): a pool shared by adapters grows as one joins. */
  grow(slots: readonly S[], maxWaiting: number): void {
    this.#states.push(
      ...slots.map((slot) => ({ slot, conversationId: undefined, busy: false, lastUsed: 0 })),
    );
    this.#maxWaiting += maxWaiting;
    this.#wakeWaiters();
  }

  /** Conversations whose KV is resident, most recently used first. */
  warmConversations(): string[] {
    return this.#states
      .filter((s) => s.conversationId !== undefined)
      .sort((a, b) => b.lastUsed - a.lastUsed)
      .map((s) => s.conversationId as string);
  }

  acquire(conversationId: string, signal: AbortSignal): Promise<SlotLease<S>> {
    signal.throwIfAborted();
    const lease = this.#tryAcquire(conversationId);
    if (lease) return Promise.resolve(lease);
    if (this.#waiters.length >= this.#maxWaiting) {
      return Promise.reject(new OverloadedError(`all ${this.total} KV slots of this adapter are busy`));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter<S> = { conversationId, resolve, reject };
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort reason is the caller's typed error, passed on as it is
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      waiter.resolve = (l) => {
        signal.removeEventListener("abort", onAbort);
        resolve(l);
      };
      this.#waiters.push(waiter);
    });
  }

  #tryAcquire(conversationId: string): SlotLease<S> | undefined {
    const bound = this.#states.find((s) => s.conversationId === conversationId);
    if (bound) return bound.busy ? undefined : this.#lend(bound, conversationId, false);
    const idle = this.#states.filter((s) => !s.busy);
    const unbound = idle.find((s) => s.conversationId === undefined);
    const victim = unbound ?? idle.sort((a, b) => a.lastUsed - b.lastUsed)[0];
    return victim ? this.#lend(victim, conversationId, victim.conversationId !== undefined) : undefined;
  }

  #lend(state: SlotState<S>, conversationId: string, rebound: boolean): SlotLease<S> {
    state.busy = true;
    state.conversationId = conversationId;
    state.lastUsed = ++this.#clock;
    let released = false;
    return {
      slot: state.slot,
      rebound,
      release: () => {
        if (released) return;
        released = true;
        state.busy = false;
        state.lastUsed = ++this.#clock;
        this.#wakeWaiters();
      },
    };
  }

  #wakeWaiters(): void {
    for (let i = 0; i < this.#waiters.length;) {
      const waiter = this.#waiters[i] as Waiter<S>;
      const lease = this.#tryAcquire(waiter.conversationId);
      if (!lease) {
        i++;
        continue;
      }
      this.#waiters.splice(i, 1);
      waiter.resolve(lease);
    }
  }

  /** Forgets the binding of a slot whose KV was lost (e.g. after an engine error). */
  forget(slot: S): void {
    const state = this.#states.find((s) => s.slot === slot);
    if (state) state.conversationId = undefined;
  }
}
