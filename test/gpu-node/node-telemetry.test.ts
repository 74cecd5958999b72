import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { answerInput, collectAnswer } from "../harness/generate-requests.ts";
import { findFreePort } from "../harness/free-port.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";

// One process plays edge and node, so one in-memory exporter sees both sides of every hop.
const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }),
);

const CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_PARENT = `00-${CLIENT_TRACE_ID}-00f067aa0ba902b7-01`;

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({
    natsUrl: nats.url,
    models: inject("models"),
    nodeId: "telemetry-node",
    node: { metricsPort: await findFreePort(), maxConcurrent: 1, maxQueued: 0 },
  });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

/** The value of the one sample of `name` whose labels include all of `labels`; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2] ?? "";
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) return Number(match[3]);
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const url = t.node.metricsUrl;
  if (!url) throw new Error("the node serves no metrics");
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  const text = await response.text();
  // MOL_SHOW_EVIDENCE=1 prints each scrape (what a closing note or a bug report shows).
  if (process.env.MOL_SHOW_EVIDENCE) console.log(text);
  return text;
}

const VIEW = "system: be brief.\nuser: hello there, how are you?\nassistant:";

describe("node telemetry", () => {
  it("carries the edge's request id and W3C trace to the node's span and log line", async () => {
    const input = answerInput("traced", "chat", VIEW);
    await collectAnswer(t.client, input, {
      trace: { requestId: "req_telemetry1", traceparent: CLIENT_PARENT },
    });
    const served = t.logs.find(
      (l) => l.message === "hop served" && (l.fields as { requestId?: string }).requestId === input.requestId,
    );
    expect(served?.fields).toMatchObject({
      hop: "answer",
      edgeRequestId: "req_telemetry1",
      traceId: CLIENT_TRACE_ID,
      adapter: "chat",
      outcome: "ok",
    });
    const ended = spans.getFinishedSpans().filter((s) => s.spanContext().traceId === CLIENT_TRACE_ID);
    const client = ended.find((s) => s.name === "hop answer" && s.kind === SpanKind.CLIENT);
    const server = ended.find((s) => s.name === "hop answer" && s.kind === SpanKind.SERVER);
    // client traceparent → the edge's hop span → (NATS headers) → the node's span, one trace throughout.
    expect(client?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(server?.parentSpanContext?.spanId).toBe(client?.spanContext().spanId);
    expect(server?.attributes).toMatchObject({
      "molmesh.request_id": "req_telemetry1",
      "molmesh.adapter": "chat",
    });
  });

  it("starts a trace when the caller sent none, so node lines still group by trace", async () => {
    const input = answerInput("untraced", "chat", VIEW);
    await collectAnswer(t.client, input);
    const served = t.logs.find(
      (l) => l.message === "hop served" && (l.fields as { requestId?: string }).requestId === input.requestId,
    );
    expect((served?.fields as { traceId?: string }).traceId).toMatch(/^[0-9a-f]{32}$/);
    expect((served?.fields as { traceId?: string }).traceId).not.toBe(CLIENT_TRACE_ID);
    expect(served?.fields).not.toHaveProperty("edgeRequestId");
  });

  it("serves Prometheus text: hop durations, tokens by adapter, KV reuse, slots, queue, overloads", async () => {
    const before = await scrape();
    const labels = { hop: "answer", adapter: "coding", outcome: "ok", node_id: "telemetry-node" };
    expect(sample(before, "molmesh_hops_total", labels)).toBeUndefined();
    const first = await collectAnswer(t.client, answerInput("metrics", "coding", VIEW));
    // The same conversation's view grows at its end: the second hop reuses the first one's KV.
    await collectAnswer(
      t.client,
      answerInput("metrics", "coding", `${VIEW}${first.text}\nuser: more?\nassistant:`),
    );
    const after = await scrape();
    expect(sample(after, "molmesh_hops_total", labels)).toBe(2);
    expect(sample(after, "molmesh_hop_duration_seconds_count", labels)).toBe(2);
    expect(sample(after, "molmesh_hop_duration_seconds_sum", labels)).toBeGreaterThan(0);
    const coding = { adapter: "coding" };
    expect(sample(after, "molmesh_prompt_tokens_total", coding)).toBeGreaterThan(0);
    expect(sample(after, "molmesh_evaluated_prompt_tokens_total", coding)).toBeGreaterThan(0);
    expect(sample(after, "molmesh_cached_prompt_tokens_total", coding)).toBeGreaterThan(0);
    expect(sample(after, "molmesh_completion_tokens_total", coding)).toBeGreaterThan(0);
    expect(sample(after, "molmesh_kv_reuse_hops_total", coding)).toBe(1);
    expect(sample(after, "molmesh_slots_in_use", coding)).toBe(0);
    expect(sample(after, "molmesh_slots_total", coding)).toBe(2);
    expect(sample(after, "molmesh_queue_depth", coding)).toBe(0);
    expect(sample(after, "molmesh_hops_in_flight", {})).toBe(0);
  });

  it("counts the hops refused as overloaded", async () => {
    // maxConcurrent is 1: while one answer runs, a second is refused at once.
    const running = collectAnswer(
      t.client,
      answerInput("busy", "chat", VIEW, { sampling: { maxTokens: 24, temperature: 0 } }),
    );
    await expect.poll(async () => sample(await scrape(), "molmesh_hops_in_flight", {})).toBe(1);
    const refused = streamGenerate(t.client, answerInput("busy-2", "chat", VIEW));
    await expect(refused.next()).rejects.toMatchObject({ code: "overloaded" });
    await running;
    const text = await scrape();
    expect(sample(text, "molmesh_overloads_total", { hop: "answer" })).toBe(1);
    expect(sample(text, "molmesh_hops_total", { hop: "answer", outcome: "overloaded" })).toBe(1);
  });
});
