import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

export interface NodeTracing {
  endpoint: string;
  /** Flushes the spans still batched, then stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Registers an OTLP/HTTP span exporter when `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces-only variant) is set;
 * otherwise the OpenTelemetry API stays a no-op and hop spans only lend their trace ids to the log lines. The
 * exporter reads the standard OTEL_EXPORTER_OTLP_* variables itself (headers, timeout, `/v1/traces` suffix).
 */
export function startNodeTracing(
  env: Record<string, string | undefined>,
  nodeId: string,
): NodeTracing | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return undefined;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": env.OTEL_SERVICE_NAME?.trim() || "molmesh-gpu-node",
      "service.instance.id": nodeId,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  trace.setGlobalTracerProvider(provider);
  return { endpoint, shutdown: () => provider.shutdown() };
}
