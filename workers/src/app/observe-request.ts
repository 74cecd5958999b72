import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import {
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  type HopTraceContext,
} from "../../../schema/wire/v2/index.ts";
import { ApiError, toApiError } from "../api/errors/api-error.ts";
import { injectTraceContext, readTraceId, startEdgeSpan } from "../nats/trace-context.ts";
import type { AppDeps, AppEnv } from "./app-deps.ts";
import { StageClock, formatServerTiming } from "../lib/stage-timings.ts";
import type { RequestLogLine, RequestTelemetry } from "./request-telemetry.ts";

/** Debug logging only: how much of a request body a line keeps. */
const DEBUG_BODY_CHARS = 2_000;

const CONSOLE_TELEMETRY: RequestTelemetry = {
  debug: false,
  write: (line) => console.log(JSON.stringify(line)),
};

/**
 * Stamps the request id, opens the request's server span (a child of the client's `traceparent` when it sent
 * one), resolves the per-request deps with both, and writes the request's line when the response is ready.
 */
export function observeRequests(
  resolveDeps: (env: unknown, request: { trace: HopTraceContext; raw: Request }) => AppDeps,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = Date.now();
    const requestId = `req_${crypto.randomUUID().replace(/-/g, "")}`;
    const server = startEdgeSpan(
      `${c.req.method} ${c.req.path}`,
      "server",
      {
        ...optional("traceparent", c.req.header(TRACEPARENT_HEADER)),
        ...optional("tracestate", c.req.header(TRACESTATE_HEADER)),
      },
      { "http.request.method": c.req.method, "molmesh.request_id": requestId },
    );
    const trace: HopTraceContext = { requestId, ...injectTraceContext(server.span) };
    c.set("requestId", requestId);
    c.set("deps", resolveDeps(c.env, { trace, raw: c.req.raw }));
    const stages = new StageClock(Date.now);
    c.set("stages", stages);
    await next();
    c.res.headers.set("x-request-id", requestId);
    const handled = Date.now();

    const telemetry = c.var.deps.telemetry ?? CONSOLE_TELEMETRY;
    const line = await describeRequest(c, requestId, started, telemetry.debug);
    const traceId = readTraceId(server.span);
    if (traceId) line.traceId = traceId;
    server.end(line.errorCode ?? "ok", {
      "http.route": line.route,
      "http.response.status_code": line.status,
    });
    try {
      telemetry.write(line);
    } catch {
      // A log sink that fails must never turn a served request into an error.
    }
    // A streamed response's header leaves before the turn ends: it holds the stages up to the first part.
    const edge = { ...stages.timings, log: Date.now() - handled, edge: Date.now() - started };
    c.res.headers.set("server-timing", formatServerTiming(edge));
    const after = telemetry.afterResponse?.();
    if (after) keepAlive(c, after);
  };
}

async function describeRequest(
  c: Context<AppEnv>,
  requestId: string,
  started: number,
  debug: boolean,
): Promise<RequestLogLine> {
  const { status } = c.res;
  const principal = c.get("principal") as AppEnv["Variables"]["principal"] | undefined;
  const line: RequestLogLine = {
    level: status >= 500 ? "error" : status >= 400 ? "warn" : "info",
    msg: "request",
    requestId,
    method: c.req.method,
    route: routeOf(c),
    status,
    durationMs: Date.now() - started,
    streamed: (c.res.headers.get("content-type") ?? "").startsWith("text/event-stream"),
    ...(principal ? { tenantId: principal.tenantId, keyId: principal.keyId } : {}),
  };
  if (status >= 400) {
    const error = c.error ? toApiError(c.error) : await readErrorEnvelope(c.res);
    if (error) {
      line.errorCode = error.code;
      line.errorType = error.type;
    }
    if (status >= 500 && c.error) line.cause = describeCause(c.error);
  }
  if (debug && c.req.method !== "GET") {
    const body = await c.req.text().catch(() => "");
    if (body) line.requestBody = body.slice(0, DEBUG_BODY_CHARS);
  }
  return line;
}

/** The first handler route that matched (middleware routes are method ALL), or `(unmatched)` for a 404. */
function routeOf(c: Context): string {
  const handler = matchedRoutes(c).find((r) => r.method !== "ALL");
  return handler?.path ?? "(unmatched)";
}

async function readErrorEnvelope(response: Response): Promise<{ code: string; type: string } | undefined> {
  if (!(response.headers.get("content-type") ?? "").includes("json")) return undefined;
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: unknown; type?: unknown } } | undefined;
  const { code, type } = body?.error ?? {};
  return typeof code === "string" ? { code, type: typeof type === "string" ? type : "" } : undefined;
}

/** `name: message` of the error and its causes (three deep): enough to find the bug, no request data. */
function describeCause(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error instanceof ApiError && error.cause !== undefined ? error.cause : error;
  for (let depth = 0; depth < 3 && current !== undefined; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      parts.push(`${current.name}${typeof code === "string" ? ` [${code}]` : ""}: ${current.message}`);
      current = current.cause;
    } else {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrown non-Error: its own string form is all it has
      parts.push(String(current));
      current = undefined;
    }
  }
  return parts.join(" <- ").slice(0, 1_000);
}

function keepAlive(c: Context, work: Promise<void>): void {
  const settled = work.catch(() => undefined);
  try {
    c.executionCtx.waitUntil(settled);
  } catch {
    // No execution context (Node tests): the promise simply runs on.
  }
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value ? ({ [key]: value } as Record<K, string>) : {};
}
