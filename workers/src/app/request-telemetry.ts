/**
 * One structured line per request: who (tenant, key id; never the key), what (route, status, error code), how
 * long, and for a server error its cause. Message text stays out unless debug logging is on: prompts and answers
 * are the tenant's data, not the operator's.
 */
export interface RequestLogLine {
  level: "info" | "warn" | "error";
  msg: "request";
  requestId: string;
  traceId?: string;
  method: string;
  /** The matched route pattern (`/v1/conversations/:id`), so lines group without ids in them. */
  route: string;
  status: number;
  /** Until the response headers: a streamed body goes on after it. */
  durationMs: number;
  streamed: boolean;
  tenantId?: string;
  keyId?: string;
  errorCode?: string;
  errorType?: string;
  /** 5xx only: the error chain behind the generic message the client got. */
  cause?: string;
  /** Debug logging only: the request body, cut at 2,000 characters. */
  requestBody?: string;
}

/** Where request lines and metrics go; the runtime adapter decides (console + Analytics Engine on Cloudflare). */
export interface RequestTelemetry {
  /** Adds request bodies to the lines (MOL_LOG_LEVEL=debug); never in production. */
  debug: boolean;
  write(line: RequestLogLine): void;
  /** Work to finish after the response (span export); the adapter keeps the isolate alive for it. */
  afterResponse?(): Promise<void>;
}
