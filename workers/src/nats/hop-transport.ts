import {
  errors as natsErrors,
  headers as natsHeaders,
  type MsgHdrs,
  type NatsConnection,
} from "@nats-io/nats-core";
import {
  CancelledError,
  DeadlineExceededError,
  EngineFailureError,
  MolWireError,
  NoRespondersError,
  WIRE_VERSION,
  buildCancelSubject,
  buildGenerateSubject,
  buildNodeGenerateSubject,
  encodeWireMessage,
  REQUEST_ID_HEADER,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  type HopTraceContext,
  type PriorityClass,
} from "../../../schema/wire/v2/index.ts";
import { injectTraceContext, startEdgeSpan, type EndableSpan } from "./trace-context.ts";

// What every generate request does on NATS whatever its reply shape: per-call options, the subject, the NATS → wire
// error mapping, and cancelling the request on the node when the caller gives up.

/** Extra wait past the hop's own deadline, so the node's typed `deadline_exceeded` reply arrives first. */
export const DEFAULT_REPLY_GRACE_MS = 2_000;

export interface HopCallOptions {
  /** The node placement chose (its own subject: the affinity path); absent, the queue group's subject. */
  nodeId?: string | undefined;
  /** Aborting cancels the hop on the node. */
  signal?: AbortSignal;
  subjectPrefix?: string | undefined;
  /**
   * Streamed requests: how long to wait for the node's first part (`start`, sent as soon as it accepts the request).
   * A node that says nothing by then is taken as hung, so the hop can go elsewhere before any text was shown.
   */
  firstPartTimeoutMs?: number;
  /** Streamed requests: the longest silence between two parts; past it the node is taken as lost. */
  stallTimeoutMs?: number;
  /** The HTTP request this hop serves: its id and trace go to the node as NATS headers, for its logs and spans. */
  trace?: HopTraceContext;
}

/** The subject a request goes out on: the chosen node's own, or the queue group's. */
export function generateSubject(options: Pick<HopCallOptions, "nodeId" | "subjectPrefix">): string {
  return options.nodeId === undefined
    ? buildGenerateSubject(options.subjectPrefix)
    : buildNodeGenerateSubject(options.nodeId, options.subjectPrefix);
}

/**
 * Opens the hop's client span (a child of the request's trace) and the NATS headers that carry it and the edge's
 * request id to the node. Without a trace the span starts one, so node logs still group by hop.
 */
export function startHopSpan(
  hop: PriorityClass,
  requestId: string,
  subject: string,
  trace: HopTraceContext | undefined,
): { span: EndableSpan; headers: MsgHdrs } {
  const span = startEdgeSpan(`hop ${hop}`, "client", trace ?? {}, {
    "molmesh.hop": hop,
    "molmesh.hop_id": requestId,
    "messaging.system": "nats",
    "messaging.destination.name": subject,
    ...(trace?.requestId ? { "molmesh.request_id": trace.requestId } : {}),
  });
  const headers = natsHeaders();
  const carried = injectTraceContext(span.span);
  if (trace?.requestId) headers.set(REQUEST_ID_HEADER, trace.requestId);
  if (carried.traceparent) headers.set(TRACEPARENT_HEADER, carried.traceparent);
  if (carried.tracestate) headers.set(TRACESTATE_HEADER, carried.tracestate);
  return { span, headers };
}

/** The outcome a hop span records: `ok` or the wire error code. */
export function hopOutcome(error: unknown): string {
  return error instanceof MolWireError ? error.code : "engine_failure";
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
  hop: PriorityClass,
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
