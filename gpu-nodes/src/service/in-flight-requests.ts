import { BadRequestError, CancelledError, DeadlineExceededError } from "../../../schema/wire/v2/index.ts";

export interface InFlightRequest {
  signal: AbortSignal;
  /** Stops the deadline timer and forgets the request; call once when the hop ends. */
  finish: () => void;
}

/**
 * Every running hop, by request id: the cancel subject and the per-request deadline both end a hop through its
 * AbortSignal, whose reason is the typed error the hop then reports.
 */
export class InFlightRequests {
  readonly #requests = new Map<string, AbortController>();

  get size(): number {
    return this.#requests.size;
  }

  start(requestId: string, timeoutMs: number): InFlightRequest {
    if (this.#requests.has(requestId)) {
      throw new BadRequestError(`request id "${requestId}" is already running on this node`);
    }
    const controller = new AbortController();
    this.#requests.set(requestId, controller);
    const timer = setTimeout(
      () => controller.abort(new DeadlineExceededError(`hop exceeded its deadline of ${timeoutMs} ms`)),
      timeoutMs,
    );
    return {
      signal: controller.signal,
      finish: () => {
        clearTimeout(timer);
        if (this.#requests.get(requestId) === controller) this.#requests.delete(requestId);
      },
    };
  }

  /** Returns whether the request was running here. */
  cancel(requestId: string, reason = "cancelled by the requester"): boolean {
    const controller = this.#requests.get(requestId);
    controller?.abort(new CancelledError(reason));
    return controller !== undefined;
  }

  cancelAll(reason: string): void {
    for (const controller of this.#requests.values()) controller.abort(new CancelledError(reason));
  }
}
