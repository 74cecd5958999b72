import type { MsgHdrs } from "@nats-io/nats-core";
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { REQUEST_ID_HEADER, type PriorityClass } from "../../../schema/wire/v2/index.ts";

/** The node's tracer name; spans go wherever the registered provider sends them (nowhere by default). */
export const NODE_TRACER_NAME = "molmesh-gpu-node";

const propagator = new W3CTraceContextPropagator();
const natsHeaderGetter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (headers) => (headers ? [...headers.keys()] : []),
  get: (headers, key) => (headers?.has(key) ? headers.get(key) : undefined),
};

/** A hop's correlation on this node: its span, and the ids its log lines carry. */
export interface HopTrace {
  span: Span;
  /** The fields every log line about this hop carries (edge request id, trace id), omitted when unknown. */
  logFields: { edgeRequestId?: string; traceId?: string };
  /** Names the span after the request once it has been read: `hop <priority class>`, its id and adapter. */
  setRequest(hop: PriorityClass, requestId: string, adapter: string): void;
  end(outcome: string): void;
}

/**
 * Opens the hop's server span as a child of the edge's (W3C `traceparent` in the NATS headers), so one trace
 * runs client → edge → node. Without a traceparent the span starts a trace of its own.
 */
export function startHopTrace(tracer: Tracer, headers: MsgHdrs | undefined, nodeId: string): HopTrace {
  const parent = propagator.extract(ROOT_CONTEXT, headers, natsHeaderGetter);
  const edgeRequestId = natsHeaderGetter.get(headers, REQUEST_ID_HEADER) as string | undefined;
  const span = tracer.startSpan(
    "hop",
    {
      kind: SpanKind.SERVER,
      attributes: {
        "molmesh.node_id": nodeId,
        ...(edgeRequestId ? { "molmesh.request_id": edgeRequestId } : {}),
      },
    },
    parent,
  );
  // A no-op tracer (no SDK registered) still carries the parent's ids, so logs correlate either way.
  const traceId = span.spanContext().traceId || trace.getSpanContext(parent)?.traceId;
  const valid = traceId !== undefined && !/^0+$/.test(traceId);
  return {
    span,
    logFields: { ...(edgeRequestId ? { edgeRequestId } : {}), ...(valid ? { traceId } : {}) },
    setRequest(hop, requestId, adapter) {
      span.updateName(`hop ${hop}`);
      span.setAttributes({ "molmesh.hop": hop, "molmesh.hop_id": requestId, "molmesh.adapter": adapter });
    },
    end(outcome) {
      span.setAttribute("molmesh.outcome", outcome);
      if (outcome !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      span.end();
    },
  };
}
