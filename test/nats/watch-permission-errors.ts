import { PermissionViolationError, type NatsConnection } from "@nats-io/nats-core";

export type PermissionOperation = "publish" | "subscription";

/** A violation as plain data, so it crosses process boundaries and compares with `toEqual`. */
export interface PermissionViolation {
  operation: PermissionOperation;
  subject: string;
  queue?: string;
}

export interface PermissionErrorWatch {
  /** Every violation the server has reported on this connection so far, oldest first. */
  readonly seen: readonly PermissionViolation[];
  /**
   * Resolves with the server's violation for `operation` on `subject` reported at index `from` of
   * {@link seen} or later (already reported or still to come); rejects after `timeoutMs` without one.
   */
  waitFor(
    operation: PermissionOperation,
    subject: string,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<PermissionViolation>;
}

/**
 * Records the server's permission violations on a connection. nats.js v3 reports them asynchronously, as
 * `{ type: "error" }` status events (a refused publish has no other trace on the publisher), so a test must
 * wait for the event rather than expect a synchronous throw.
 */
export function watchPermissionErrors(nc: NatsConnection): PermissionErrorWatch {
  const seen: PermissionViolation[] = [];
  const waiters = new Set<() => void>();
  // status() registers its listener synchronously: nothing reported after this call is missed.
  const statuses = nc.status();
  void (async () => {
    for await (const status of statuses) {
      if (status.type !== "error" || !(status.error instanceof PermissionViolationError)) continue;
      const { operation, subject, queue } = status.error;
      seen.push({
        operation: operation === "subscription" ? "subscription" : "publish",
        subject,
        ...(queue === undefined ? {} : { queue }),
      });
      for (const wake of waiters) wake();
    }
  })();

  return {
    seen,
    waitFor(operation, subject, { from = 0, timeoutMs = 2_000 } = {}) {
      const find = () => seen.slice(from).find((v) => v.operation === operation && v.subject === subject);
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = find();
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${operation} permission violation on "${subject}" within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
