import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLogLine } from "../../workers/src/app/request-telemetry.ts";
import { TEST_ADMIN_TOKEN, TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../harness/start-otlp-receiver.ts";

let mesh: TestMesh;
let collector: OtlpReceiver;

beforeAll(async () => {
  // spawnEdge runs wrangler at `warn` by default, which hides the Worker's console.log (the 2xx lines).
  process.env.MOL_EDGE_LOG_LEVEL = "log";
  collector = await startOtlpReceiver();
  mesh = await startTestMesh({
    adminToken: TEST_ADMIN_TOKEN,
    edgeVars: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
  });
}, 180_000);
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await mesh?.stop();
  await collector?.close();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const CLIENT_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_PARENT = `00-${CLIENT_TRACE_ID}-b7ad6b7169203331-01`;
/** Message text that must never reach a log line (debug logging is off). */
const SECRET_TEXT = "my passport number is X1234567";

/** The edge's request lines: one JSON object each (wrangler wraps warn and error lines in colour codes). */
function requestLines(): RequestLogLine[] {
  return mesh.edgeLogs.flatMap((line) => {
    const start = line.indexOf('{"level"');
    if (start < 0) return [];
    try {
      const parsed = JSON.parse(line.slice(start, line.lastIndexOf("}") + 1)) as { msg?: unknown };
      return parsed.msg === "request" ? [parsed as RequestLogLine] : [];
    } catch {
      return [];
    }
  });
}

async function lineOf(requestId: string | null): Promise<RequestLogLine> {
  await expect.poll(() => requestLines().filter((l) => l.requestId === requestId).length).toBe(1);
  return requestLines().find((l) => l.requestId === requestId) as RequestLogLine;
}

describe("edge request logs and traces", () => {
  it("writes one JSON line per request with tenant, key id, route, status and duration; no key, no text", async () => {
    const created = await mesh.api("/v1/conversations", { method: "POST", json: { metadata: { a: "b" } } });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const response = await mesh.api("/v1/responses", {
      method: "POST",
      headers: { traceparent: CLIENT_PARENT },
      json: { conversation: id, input: SECRET_TEXT, max_output_tokens: 4 },
    });
    expect(response.status).toBe(200);
    await response.text();
    const requestId = response.headers.get("x-request-id");
    const line = await lineOf(requestId);
    expect(line).toMatchObject({
      level: "info",
      method: "POST",
      route: "/v1/responses",
      status: 200,
      tenantId: "dev",
      traceId: CLIENT_TRACE_ID,
      streamed: false,
    });
    expect(line.keyId).toMatch(/\S/);
    expect(line.durationMs).toBeGreaterThan(0);
    const createLine = await lineOf(created.headers.get("x-request-id"));
    expect(createLine).toMatchObject({ route: "/v1/conversations", status: 200 });
    expect(createLine.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(createLine.traceId).not.toBe(CLIENT_TRACE_ID);

    // The node's lines about this request's hops carry its request id and the client's trace id.
    const node = mesh.node?.logs ?? [];
    const hops = node.filter((l) => (l.fields as { edgeRequestId?: string }).edgeRequestId === requestId);
    expect(hops.map((l) => (l.fields as { hop: string }).hop)).toEqual(
      expect.arrayContaining(["route", "answer"]),
    );
    for (const hop of hops) expect(hop.fields).toMatchObject({ traceId: CLIENT_TRACE_ID });
    // MOL_SHOW_EVIDENCE=1 prints one request's lines from both sides (what a closing note or a bug report shows).
    if (process.env.MOL_SHOW_EVIDENCE) console.log(JSON.stringify({ edge: line, node: hops }, null, 1));

    // With OTEL_EXPORTER_OTLP_ENDPOINT set the edge exports its spans: the request's, under the client's span,
    // and one per hop under the request's.
    await expect
      .poll(() =>
        collector
          .spans()
          .filter((s) => s.traceId === CLIENT_TRACE_ID)
          .map((s) => s.name),
      )
      .toEqual(expect.arrayContaining(["POST /v1/responses", "hop route", "hop answer"]));
    const traced = collector.spans().filter((s) => s.traceId === CLIENT_TRACE_ID);
    const server = traced.find((s) => s.name === "POST /v1/responses");
    expect(server).toMatchObject({ service: "molmesh-edge", parentSpanId: "b7ad6b7169203331" });
    expect(server?.attributes).toMatchObject({
      "http.route": "/v1/responses",
      "http.response.status_code": 200,
    });
    for (const hop of traced.filter((s) => s.name.startsWith("hop "))) {
      expect(hop.parentSpanId).toBe(server?.spanId);
      expect(hop.attributes).toMatchObject({ "molmesh.request_id": requestId, "molmesh.outcome": "ok" });
    }

    const all = mesh.edgeLogs.join("\n");
    expect(all).not.toContain(TEST_API_KEY);
    expect(all).not.toContain(SECRET_TEXT);
    expect(all).not.toContain(TEST_ADMIN_TOKEN);
  });

  it("logs refusals with their error code, and a 401 with no tenant", async () => {
    const unknown = await fetch(`${mesh.edge.url}/v1/models`, {
      headers: { authorization: "Bearer sk-molmesh-not-a-key-0000000000" },
    });
    expect(unknown.status).toBe(401);
    const refused = await lineOf(unknown.headers.get("x-request-id"));
    expect(refused).toMatchObject({ level: "warn", status: 401, route: "/v1/models" });
    expect(refused.errorCode).toMatch(/\S/);
    expect(refused).not.toHaveProperty("tenantId");
    expect(mesh.edgeLogs.join("\n")).not.toContain("sk-molmesh-not-a-key-0000000000");

    const missing = await mesh.api("/v1/conversations/conv_missing");
    expect(missing.status).toBe(404);
    expect(await lineOf(missing.headers.get("x-request-id"))).toMatchObject({
      route: "/v1/conversations/:id",
      status: 404,
      errorCode: "conversation_not_found",
      tenantId: "dev",
    });
    const unrouted = await fetch(`${mesh.edge.url}/nowhere`);
    expect(await lineOf(unrouted.headers.get("x-request-id"))).toMatchObject({
      route: "(unmatched)",
      status: 404,
      errorCode: "not_found",
    });
  });
});

describe("health probes", () => {
  it("/livez and /readyz answer without fleet details; the admin token sees nodes and load", async () => {
    const live = await fetch(`${mesh.edge.url}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });
    for (const path of ["/readyz", "/healthz"]) {
      const publicView = await fetch(`${mesh.edge.url}${path}`);
      expect(publicView.status).toBe(200);
      expect(await publicView.json()).toEqual({ status: "ok" });
      // A tenant key is not the operator's: still no details.
      const tenantView = await fetch(`${mesh.edge.url}${path}`, {
        headers: { authorization: `Bearer ${TEST_API_KEY}` },
      });
      expect(await tenantView.json()).toEqual({ status: "ok" });
      const operator = await fetch(`${mesh.edge.url}${path}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(operator.status).toBe(200);
      const details = (await operator.json()) as { live_nodes: number; nodes: Array<{ id: string }> };
      expect(details).toMatchObject({ status: "ok", nats: "ok", live_nodes: 1 });
      expect(details.nodes.map((n) => n.id)).toEqual(["test-node"]);
    }
  });
});
