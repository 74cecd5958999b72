/**
 * Runs tasks one at a time, in arrival order. A Durable Object's input gate opens at every await on I/O, so two
 * turns of one conversation would otherwise interleave their events.
 */
export class TurnQueue {
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;

  get pending(): number {
    return this.#pending;
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    this.#pending++;
    const result = this.#tail.then(task);
    this.#tail = result
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.#pending--;
      });
    return result;
  }
}
