import { trace, type AnyValue, type Attributes, type HrTime } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import {
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import type { Env } from "./env.ts";

/**
 * The edge's OpenTelemetry SDK: one TracerProvider per isolate, so spans get real ids (a trace starts here when
 * the client sent no `traceparent`). Spans leave only when OTEL_EXPORTER_OTLP_ENDPOINT is set, as OTLP/HTTP JSON
 * over `fetch`: the SDK's own OTLP exporter targets Node and browsers, not workerd.
 */
let provider: TracerProvider | undefined;

export function ensureEdgeTracing(env: Env): TracerProvider {
  if (provider) return provider;
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || otlpTracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  provider = new TracerProvider({
    spanProcessors: endpoint
      ? [
          new SimpleSpanProcessor({
            exporter: new FetchOtlpSpanExporter(endpoint, parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), {
              "service.name": env.OTEL_SERVICE_NAME?.trim() || "molmesh-edge",
            }),
          }),
        ]
      : [],
  });
  trace.setGlobalTracerProvider(provider);
  return provider;
}

/** Waits for the spans this isolate ended to be exported (a Worker passes it to `waitUntil`). */
export function flushEdgeTracing(): Promise<void> {
  return provider?.forceFlush() ?? Promise.resolve();
}

function otlpTracesUrl(base: string | undefined): string | undefined {
  const trimmed = base?.trim();
  return trimmed ? `${trimmed.replace(/\/+$/, "")}/v1/traces` : undefined;
}

/** `key1=value1,key2=value2` (the OTEL_EXPORTER_OTLP_HEADERS format); values may be URL-encoded. */
function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at > 0) headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** OTLP/HTTP with the JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding). */
class FetchOtlpSpanExporter implements SpanExporter {
  constructor(
    readonly url: string,
    readonly headers: Record<string, string>,
    readonly resource: Attributes,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const body = {
      resourceSpans: [
        {
          resource: { attributes: toKeyValues(this.resource) },
          scopeSpans: [
            {
              scope: { name: spans[0]?.instrumentationScope.name ?? "molmesh-edge" },
              spans: spans.map(toOtlpSpan),
            },
          ],
        },
      ],
    };
    fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...this.headers },
      body: JSON.stringify(body),
    }).then(
      async (response) => {
        await response.body?.cancel();
        done({ code: response.ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED });
      },
      (error: unknown) =>
        done({
          code: ExportResultCode.FAILED,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function toOtlpSpan(span: ReadableSpan) {
  const context = span.spanContext();
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
    name: span.name,
    // OTLP's SpanKind is the API's plus one (0 is UNSPECIFIED there).
    kind: span.kind + 1,
    startTimeUnixNano: toUnixNano(span.startTime),
    endTimeUnixNano: toUnixNano(span.endTime),
    attributes: toKeyValues(span.attributes),
    status: { code: span.status.code, ...(span.status.message ? { message: span.status.message } : {}) },
  };
}

function toUnixNano([seconds, nanos]: HrTime): string {
  return (BigInt(seconds) * 1_000_000_000n + BigInt(nanos)).toString();
}

function toKeyValues(attributes: Attributes) {
  return Object.entries(attributes)
    .filter((entry): entry is [string, AnyValue] => entry[1] !== undefined)
    .map(([key, value]) => ({ key, value: toAnyValue(value) }));
}

function toAnyValue(value: AnyValue): object {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((v) => ({ stringValue: String(v) })) } };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number")
    return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  return { stringValue: String(value) };
}
