import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { HopTraceContext } from "../../../schema/wire/v2/index.ts";

/**
 * W3C trace context at the edge, through the OpenTelemetry API only: the runtime decides where spans go (see
 * cloudflare/edge-tracing.ts). Contexts are passed explicitly, never through a context manager: workerd has no
 * AsyncLocalStorage without a Node compatibility flag, and every hop already knows its parent.
 */
export const EDGE_TRACER_NAME = "molmesh-edge";

const propagator = new W3CTraceContextPropagator();
type Carrier = Record<string, string | undefined>;
const getter: TextMapGetter<Carrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const setter: TextMapSetter<Carrier> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The trace a client asked to join (`traceparent`, `tracestate`), or the root context to start a new one. */
export function extractTraceContext(carrier: { traceparent?: string; tracestate?: string }): Context {
  return propagator.extract(ROOT_CONTEXT, { ...carrier }, getter);
}

/** `traceparent`/`tracestate` naming `span` as the parent of whatever runs next (another object, a node). */
export function injectTraceContext(span: Span, parent: Context = ROOT_CONTEXT): HopTraceContext {
  const carrier: Carrier = {};
  propagator.inject(trace.setSpan(parent, span), carrier, setter);
  return {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
}

/** The trace id to log, or undefined when neither a client nor the tracer started a trace. */
export function readTraceId(span: Span): string | undefined {
  const { traceId } = span.spanContext();
  return traceId && !/^0+$/.test(traceId) ? traceId : undefined;
}

/** A span ended with a result: `ok`, or an error code (which marks the span as failed). */
export interface EndableSpan {
  span: Span;
  end(outcome: string, attributes?: Attributes): void;
}

/** Starts a span under `parent` (a context, or the W3C headers another process sent). */
export function startEdgeSpan(
  name: string,
  kind: "server" | "client" | "internal",
  parent: Context | HopTraceContext,
  attributes: Attributes = {},
): EndableSpan {
  const parentContext = isContext(parent) ? parent : extractTraceContext(parent);
  const span = trace.getTracer(EDGE_TRACER_NAME).startSpan(
    name,
    {
      kind: kind === "server" ? SpanKind.SERVER : kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
      attributes,
      // workerd's performance clock has no useful origin; the wall clock is what a trace viewer expects.
      startTime: Date.now(),
    },
    parentContext,
  );
  let ended = false;
  return {
    span,
    end(outcome, more) {
      if (ended) return;
      ended = true;
      span.setAttribute("molmesh.outcome", outcome);
      if (more) span.setAttributes(more);
      if (outcome !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      span.end(Date.now());
    },
  };
}

function isContext(value: Context | HopTraceContext): value is Context {
  return typeof (value as Context).getValue === "function";
}
