import { errors as natsErrors, type NatsConnection } from "@nats-io/nats-core";
import {
  CancelledError,
  DeadlineExceededError,
  EngineFailureError,
  MolWireError,
  NoRespondersError,
  WIRE_VERSION,
  buildCancelSubject,
  encodeWireMessage,
  type Hop,
} from "../v1/index.ts";

// What every hop does on NATS whatever its reply shape: per-call options, the NATS → wire error mapping, and
// cancelling the hop on the node when the caller gives up.

/** Extra wait past the hop's own deadline, so the node's typed `deadline_exceeded` reply arrives first. */
export const DEFAULT_REPLY_GRACE_MS = 2_000;

export interface HopCallOptions {
  /** Override the subject (e.g. a node's own affinity subject); defaults to the queue-group subject. */
  subject?: string;
  /** Aborting cancels the hop on the node. */
  signal?: AbortSignal;
  subjectPrefix?: string | undefined;
  /**
   * Answer hop: how long to wait for the node's first part (`start`, sent as soon as it accepts the hop). A node
   * that says nothing by then is taken as hung, so the hop can go elsewhere before any text was shown.
   */
  firstPartTimeoutMs?: number;
  /** Answer hop: the longest silence between two parts once streaming; past it the node is taken as lost. */
  stallTimeoutMs?: number;
}

/** Turns a NATS client failure into the wire's typed errors, so callers branch on one error family. */
export function mapNatsError(error: unknown, subject: string): MolWireError {
  if (error instanceof MolWireError) return error;
  const noResponders =
    error instanceof natsErrors.NoRespondersError ||
    (error instanceof natsErrors.RequestError && error.isNoResponders());
  if (noResponders) return new NoRespondersError(`no GPU node is serving ${subject}`, { cause: error });
  if (error instanceof natsErrors.TimeoutError) {
    return new DeadlineExceededError(`no reply on ${subject} before the deadline`, { cause: error });
  }
  return new EngineFailureError(`NATS request on ${subject} failed: ${String(error)}`, { cause: error });
}

/** Tells whichever node runs `requestId` to stop; fire-and-forget (a node that already finished ignores it). */
export function publishCancel(
  nc: NatsConnection,
  requestId: string,
  reason: string,
  subjectPrefix?: string,
): void {
  try {
    nc.publish(
      buildCancelSubject(subjectPrefix),
      encodeWireMessage({ version: WIRE_VERSION, type: "cancel", requestId, reason: reason.slice(0, 200) }),
    );
  } catch {
    // A closed connection cannot cancel; the node's own deadline still ends the hop.
  }
}

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
