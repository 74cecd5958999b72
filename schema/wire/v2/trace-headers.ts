/**
 * NATS message headers a hop request may carry besides its body: the edge's request id (so a node's log lines
 * name the HTTP request they served) and W3C trace context (so a hop's span joins the client's trace). They are
 * optional and never validated as wire data: a missing or malformed header only loses correlation, never a hop.
 */
export const REQUEST_ID_HEADER = "x-request-id";
/** W3C Trace Context: https://www.w3.org/TR/trace-context/ */
export const TRACEPARENT_HEADER = "traceparent";
export const TRACESTATE_HEADER = "tracestate";

/** What travels with one hop for correlation; each field is omitted when unknown. */
export interface HopTraceContext {
  requestId?: string;
  traceparent?: string;
  tracestate?: string;
}
