import {
  REQUEST_ID_HEADER,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  type HopTraceContext,
} from "../../../schema/wire/v2/index.ts";

/** More turns than one conversation object ever runs at once; past it the oldest entries go. */
const MAX_TRACKED_TURNS = 256;

/**
 * Which HTTP request (id, W3C trace) each turn of a conversation object serves, so its hops can carry them to
 * the node. Keyed by turn id: a hop's request id is `<turnId>.<hop>.<attempt>` (conversation/turn-hops.ts),
 * so the hop client finds the trace without the turn loop passing it along.
 */
export class TurnTraces {
  readonly #byTurn = new Map<string, HopTraceContext>();

  /** The correlation headers the Worker sent with a turn request (see conversation-handle.ts). */
  static read(request: Request): HopTraceContext {
    const pick = (name: string) => request.headers.get(name) ?? undefined;
    const requestId = pick(REQUEST_ID_HEADER);
    const traceparent = pick(TRACEPARENT_HEADER);
    const tracestate = pick(TRACESTATE_HEADER);
    return {
      ...(requestId ? { requestId } : {}),
      ...(traceparent ? { traceparent } : {}),
      ...(tracestate ? { tracestate } : {}),
    };
  }

  /** Remembers `trace` for `turnId`; returns the turn id, for use as the turn loop's `newTurnId`. */
  track(turnId: string, trace: HopTraceContext): string {
    this.#byTurn.set(turnId, trace);
    for (const oldest of this.#byTurn.keys()) {
      if (this.#byTurn.size <= MAX_TRACKED_TURNS) break;
      this.#byTurn.delete(oldest);
    }
    return turnId;
  }

  /** The trace of the turn a hop belongs to. */
  ofHop(hopRequestId: string): HopTraceContext | undefined {
    return this.#byTurn.get(hopRequestId.split(".")[0] ?? "");
  }
}

/** The headers that carry a request's correlation into another object or process. */
export function toTraceHeaders(trace: HopTraceContext): Record<string, string> {
  return {
    ...(trace.requestId ? { [REQUEST_ID_HEADER]: trace.requestId } : {}),
    ...(trace.traceparent ? { [TRACEPARENT_HEADER]: trace.traceparent } : {}),
    ...(trace.tracestate ? { [TRACESTATE_HEADER]: trace.tracestate } : {}),
  };
}
