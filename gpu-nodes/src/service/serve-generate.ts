import type { Msg, NatsConnection, Subscription } from "@nats-io/nats-core";
import { trace, type Tracer } from "@opentelemetry/api";
import {
  NODE_QUEUE_GROUP,
  STREAM_KEEPALIVE_MS,
  WIRE_VERSION,
  buildCancelSubject,
  buildGenerateSubject,
  buildNodeGenerateSubject,
  cancelRequestSchema,
  decodeWireMessage,
  encodeWireMessage,
  generateRequestSchema,
  isLatencyClass,
  parseAdapterName,
  readRequestId,
  toWireErrorPayload,
  type PriorityClass,
  type Usage,
} from "../../../schema/wire/v2/index.ts";
import type { Engine } from "../engine/engine.ts";
import type { Admission } from "./admission.ts";
import type { InFlightRequests } from "./in-flight-requests.ts";
import { serveGenerate, type GenerateContext, type StreamPartBody } from "./generate-handler.ts";
import { NODE_TRACER_NAME, startHopTrace } from "./hop-trace.ts";
import type { NodeMetrics } from "./node-metrics.ts";
import type { NodeLoadMeter } from "./node-load.ts";

/** The few logging calls the service makes; pino satisfies it, tests may pass a silent one. */
export interface NodeLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface ServeHopsOptions {
  nc: NatsConnection;
  engine: Engine;
  nodeId: string;
  admission: Admission;
  inFlight: InFlightRequests;
  logger: NodeLogger;
  now: () => number;
  subjectPrefix?: string;
  /** Where hop durations and token counts go (a Prometheus registry in production). */
  metrics?: NodeMetrics;
  /** Where each hop's prefill rate goes (the heartbeat's `load`). */
  load?: NodeLoadMeter;
  /** Defaults to the globally registered provider's tracer (a no-op unless OTLP export is configured). */
  tracer?: Tracer;
}

export interface HopServer {
  /** Stops taking requests, lets running ones finish for up to `graceMs`, then cancels the rest. */
  stop(graceMs: number): Promise<void>;
}

const END_OF_STREAM = new Uint8Array(0);

/**
 * Serves `generate` on two subjects: the shared queue-group subject (cold path: any node) and this node's own
 * subject (affinity path: the edge knows our KV is warm). Every reply is validated wire data; a bad request gets a
 * typed error reply on the same request and the node keeps serving. Subjects carry the wire version, so requests of
 * another version never arrive here; one that does (sent to a v2 subject by hand) is refused as
 * `unsupported_version`, never misread.
 */
export function serveHops(options: ServeHopsOptions): HopServer {
  const { nc, nodeId, logger, inFlight } = options;
  const subscriptions: Subscription[] = [];
  const running = new Set<Promise<void>>();

  const track = (work: Promise<void>): void => {
    running.add(work);
    void work.finally(() => running.delete(work));
  };

  const handler = (error: Error | null, msg: Msg): void => {
    if (error) {
      logger.error({ err: error }, "subscription error");
      return;
    }
    track(handleGenerate(msg, options));
  };
  subscriptions.push(
    nc.subscribe(buildGenerateSubject(options.subjectPrefix), { queue: NODE_QUEUE_GROUP, callback: handler }),
    nc.subscribe(buildNodeGenerateSubject(nodeId, options.subjectPrefix), { callback: handler }),
  );
  subscriptions.push(
    nc.subscribe(buildCancelSubject(options.subjectPrefix), {
      callback: (error, msg) => {
        if (error) return;
        try {
          const cancel = decodeWireMessage(cancelRequestSchema, msg.data, "request");
          if (inFlight.cancel(cancel.requestId, cancel.reason)) {
            logger.info({ requestId: cancel.requestId }, "hop cancelled by requester");
          }
        } catch (cause) {
          logger.warn({ err: cause }, "ignored malformed cancel message");
        }
      },
    }),
  );

  return {
    async stop(graceMs) {
      for (const sub of subscriptions) sub.unsubscribe();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([Promise.allSettled([...running]), grace]);
      inFlight.cancelAll("node is shutting down");
      await Promise.allSettled([...running]);
    },
  };
}

/** Whether a raw request asks for a streamed reply, read before validation so even its error goes out as a part. */
function wantsStream(data: Uint8Array): boolean {
  try {
    const value = JSON.parse(new TextDecoder().decode(data)) as { return?: { stream?: unknown } };
    return value.return?.stream === true;
  } catch {
    return false;
  }
}

async function handleGenerate(msg: Msg, options: ServeHopsOptions): Promise<void> {
  const { admission, inFlight, logger, nodeId, now } = options;
  const receivedAt = now();
  let hop: PriorityClass | "unknown" = "unknown";
  const hopTrace = startHopTrace(options.tracer ?? trace.getTracer(NODE_TRACER_NAME), msg.headers, nodeId);
  const stream = wantsStream(msg.data) ? createStreamWriter(msg) : undefined;
  let adapter = "unknown";
  let outcome = "ok";
  let usage: Usage | undefined;
  let prefillMs: number | undefined;
  let sharing = 1;
  const replyError = (error: unknown, requestId: string | undefined): void => {
    const payload = toWireErrorPayload(error);
    outcome = payload.code;
    if (payload.code !== "cancelled" && payload.code !== "deadline_exceeded") {
      logger.warn(
        { hop, requestId, ...hopTrace.logFields, code: payload.code },
        payload.message.split("\n")[0] ?? payload.code,
      );
    }
    if (stream) {
      stream.emit({ type: "error", error: payload });
      stream.end();
    } else {
      msg.respond(
        encodeWireMessage({ version: WIRE_VERSION, type: "error", requestId, nodeId, error: payload }),
      );
    }
  };

  let release: (() => void) | undefined;
  let finish: (() => void) | undefined;
  let requestId: string | undefined = readRequestId(msg.data);
  try {
    const request = decodeWireMessage(generateRequestSchema, msg.data, "request");
    requestId = request.requestId;
    hop = request.priority;
    adapter = parseAdapterName(request.adapter).label;
    hopTrace.setRequest(hop, request.requestId, request.adapter);
    // Registered before it queues, so the request's deadline and a cancel from the edge also end its wait.
    const running = inFlight.start(request.requestId, request.timeoutMs);
    finish = running.finish;
    release = await admission.enter({
      tenantId: request.tenantId,
      lane: isLatencyClass(request.priority) ? "turn" : "summary",
      signal: running.signal,
    });
    const admittedAt = now();
    sharing = admission.inFlight;
    const ctx: GenerateContext = {
      engine: options.engine,
      nodeId,
      now,
      signal: running.signal,
      receivedAt,
      admissionMs: admittedAt - receivedAt,
    };
    // Unstreamed, the parts are dropped: the outcome goes out whole in the `result` message.
    const served = await serveGenerate(request, ctx, stream ? stream.emit : () => undefined);
    usage = served.usage;
    prefillMs = served.timings.prefillMs;
    if (stream) {
      const { adapter: _adapter, revision: _revision, ...outcomeFields } = served;
      stream.emit({ type: "finish", ...outcomeFields });
      stream.end();
    } else {
      msg.respond(
        encodeWireMessage({
          version: WIRE_VERSION,
          type: "result",
          requestId: request.requestId,
          nodeId,
          ...served,
        }),
      );
    }
  } catch (error) {
    replyError(error, requestId);
  } finally {
    finish?.();
    release?.();
    const durationMs = now() - receivedAt;
    options.metrics?.recordHop(hop, adapter, outcome, durationMs / 1000, usage);
    if (usage && prefillMs !== undefined) {
      options.load?.recordPrefill(usage.evaluatedPromptTokens, prefillMs, sharing);
    }
    hopTrace.end(outcome);
    logger.info(
      { hop, requestId, ...hopTrace.logFields, adapter, outcome, durationMs: Math.round(durationMs), usage },
      "hop served",
    );
  }
}

/**
 * Stamps `version` and a gap-free `seq` on each part; the empty message after the last is the sentinel. Until
 * then a `keepalive` part goes out whenever the stream was quiet for {@link STREAM_KEEPALIVE_MS}, so the edge
 * tells a slow prefill from a dead node within a few seconds.
 */
function createStreamWriter(msg: Msg): { emit: (part: StreamPartBody) => void; end: () => void } {
  let seq = 0;
  let quiet = false;
  const send = (part: StreamPartBody) => {
    quiet = false;
    msg.respond(encodeWireMessage({ version: WIRE_VERSION, seq: seq++, ...part }));
  };
  const keepalive = setInterval(() => {
    if (quiet) send({ type: "keepalive" });
    quiet = true;
  }, STREAM_KEEPALIVE_MS / 2);
  keepalive.unref();
  return {
    emit: send,
    end: () => {
      clearInterval(keepalive);
      msg.respond(END_OF_STREAM);
    },
  };
}
