/**
 * Every part a running turn has produced, for readers that attach late (`GET /v1/responses/{id}?stream=true`):
 * an attached reader gets the parts so far, then the live ones, then the end. Kept in memory only: a reader
 * attaching after the object was evicted reads the stored turn instead.
 */
export class PartBroadcast<T> {
  readonly #parts: T[] = [];
  readonly #waiting = new Set<() => void>();
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  push(part: T): void {
    if (this.#closed) return;
    this.#parts.push(part);
    this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  /** From the first part; ends when the broadcast closes. Returning early detaches only this reader. */
  async *attach(): AsyncGenerator<T, void, undefined> {
    let next = 0;
    for (;;) {
      while (next < this.#parts.length) yield this.#parts[next++] as T;
      if (this.#closed) return;
      await new Promise<void>((resolve) => this.#waiting.add(resolve));
    }
  }

  #wake(): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const resolve of waiting) resolve();
  }
}
