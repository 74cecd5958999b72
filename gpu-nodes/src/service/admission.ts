import { OverloadedError } from "../../../schema/wire/v1/index.ts";

/**
 * Bounds the hops a node runs at once. Past the limit a request is refused at once with `overloaded`, so the
 * edge can place it elsewhere instead of it queueing without bound here.
 */
export class Admission {
  readonly maxConcurrent: number;
  #inFlight = 0;

  constructor(maxConcurrent: number) {
    this.maxConcurrent = maxConcurrent;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Returns the release function; throws {@link OverloadedError} when the node is full. */
  enter(): () => void {
    if (this.#inFlight >= this.maxConcurrent) {
      throw new OverloadedError(`node is at its limit of ${this.maxConcurrent} concurrent hops`);
    }
    this.#inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
    };
  }
}
