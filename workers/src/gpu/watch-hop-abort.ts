import type { NatsConnection } from "@nats-io/nats-core";
import { CancelledError, MolWireError, type Hop } from "../../../schema/wire/v1/index.ts";
import { publishCancel } from "./publish-cancel.ts";

export interface HopAbortWatch {
  /** Rejects when the signal aborts: with its reason if that is a MolWireError, else a CancelledError. */
  aborted: Promise<never>;
  dispose(): void;
}

/** Ties a hop to its caller's signal: an abort tells the node to stop, and ends the caller's wait. */
export function watchHopAbort(
  nc: NatsConnection,
  hop: Hop,
  requestId: string,
  signal: AbortSignal | undefined,
  subjectPrefix?: string,
): HopAbortWatch {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      publishCancel(nc, requestId, "requester aborted", subjectPrefix);
      const reason: unknown = signal?.reason;
      reject(
        reason instanceof MolWireError ? reason : new CancelledError(`${hop} hop aborted`, { cause: reason }),
      );
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  return {
    aborted,
    dispose: () => {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    },
  };
}
