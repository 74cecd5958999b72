import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { NODE_STATUS_BUCKET, buildNodeStatusKey } from "../../schema/wire/v2/index.ts";
import { requestRoute } from "../harness/generate-requests.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { findFreePort } from "../harness/free-port.ts";
import { startOtlpReceiver } from "../harness/start-otlp-receiver.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";

let nats: NatsServerHandle;
let client: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  client = await connect({ servers: nats.url });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await client?.close();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

function spawnNode(env: Record<string, string>): ChildProcessWithoutNullStreams & { output: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "gpu-nodes/src/main.ts"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", MOL_LOG_LEVEL: "warn", ...env },
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return Object.assign(child, { output: () => output });
}

const exitCode = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

function nodeEnv(nodeId: string): Record<string, string> {
  const models = inject("models");
  return {
    MOL_NODE_ID: nodeId,
    MOL_NATS_URL: nats.url,
    MOL_BASE_MODEL: models.base,
    ...Object.fromEntries(
      Object.entries(models.adapters).map(([id, path]) => [`MOL_ADAPTER_${id.toUpperCase()}`, path]),
    ),
    MOL_THREADS: "1",
    MOL_CONTEXT_SIZE: "512",
    MOL_SLOTS_PER_ADAPTER: "1",
    MOL_HEARTBEAT_INTERVAL_MS: "300",
    MOL_HEARTBEAT_TTL_MS: "1500",
  };
}

async function waitForOutput(child: ReturnType<typeof spawnNode>, text: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!child.output().includes(text)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`no "${text}" in:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the GPU node process", () => {
  it("fails fast with a clear message on bad configuration", async () => {
    const child = spawnNode({ MOL_ENGINE: "embedded", MOL_CONTEXT_SIZE: "lots", MOL_ADAPTERS: "Chat!" });
    expect(await exitCode(child)).toBe(2);
    expect(child.output()).toContain("MOL_BASE_MODEL: required for the embedded engine");
    expect(child.output()).toContain("MOL_CONTEXT_SIZE");
    expect(child.output()).toContain("MOL_ADAPTERS");
  });

  it("serves hops, leaves the fleet on SIGTERM, and drops out of the bucket by TTL when killed", async () => {
    const graceful = spawnNode(nodeEnv("proc-a"));
    await waitForOutput(graceful, "molmesh gpu node proc-a ready");
    const result = await requestRoute(client, {
      requestId: "proc-route",
      slotKey: "proc",
      prompt: "user: hello\nlabel:",
      timeoutMs: 10_000,
    });
    expect(result.nodeId).toBe("proc-a");
    const kv = await new Kvm(client).open(NODE_STATUS_BUCKET);
    expect((await kv.get(buildNodeStatusKey("proc-a")))?.operation).toBe("PUT");
    graceful.kill("SIGTERM");
    expect(await exitCode(graceful)).toBe(0);
    expect((await kv.get(buildNodeStatusKey("proc-a")))?.operation).not.toBe("PUT");

    const killed = spawnNode(nodeEnv("proc-b"));
    await waitForOutput(killed, "molmesh gpu node proc-b ready");
    await expect.poll(async () => (await kv.get(buildNodeStatusKey("proc-b")))?.operation).toBe("PUT");
    killed.kill("SIGKILL");
    await exitCode(killed);
    // The bucket's TTL (set by the first node: 1.5 s here) removes a node that stopped beating.
    await expect
      .poll(async () => (await kv.get(buildNodeStatusKey("proc-b")))?.operation ?? "gone", { timeout: 6_000 })
      .toBe("gone");
  });

  it("prints its metrics URL and serves Prometheus text there when MOL_METRICS_PORT is set", async () => {
    const port = await findFreePort();
    const child = spawnNode({ ...nodeEnv("proc-m"), MOL_METRICS_PORT: String(port) });
    const url = `http://127.0.0.1:${port}/metrics`;
    await waitForOutput(child, `molmesh gpu node proc-m metrics ${url}`);
    await requestRoute(client, {
      requestId: "proc-metrics-route",
      slotKey: "proc-m",
      prompt: "user: hello\nlabel:",
      timeoutMs: 10_000,
    });
    const text = await (await fetch(url)).text();
    expect(text).toMatch(/^molmesh_hops_total\{[^}]*hop="route"[^}]*outcome="ok"[^}]*\} 1$/m);
    expect(text).toContain('node_id="proc-m"');
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    child.kill("SIGTERM");
    expect(await exitCode(child)).toBe(0);
  });

  it("exports hop spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, in the caller's trace", async () => {
    const collector = await startOtlpReceiver();
    try {
      const child = spawnNode({ ...nodeEnv("proc-t"), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
      await waitForOutput(child, "molmesh gpu node proc-t ready");
      const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
      await requestRoute(
        client,
        {
          requestId: "proc-traced-route",
          slotKey: "proc-t",
          prompt: "user: hello\nlabel:",
          timeoutMs: 10_000,
        },
        { trace: { requestId: "req_proc", traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
      );
      // SIGTERM flushes the batch before exit.
      child.kill("SIGTERM");
      expect(await exitCode(child)).toBe(0);
      const span = collector.spans().find((s) => s.traceId === traceId && s.name === "hop route");
      expect(span).toMatchObject({ service: "molmesh-gpu-node" });
      expect(span?.attributes).toMatchObject({
        "molmesh.request_id": "req_proc",
        "molmesh.node_id": "proc-t",
      });
      // The parent is the caller's hop span (this process's no-op tracer passes the traceparent's own span on).
      expect(span?.parentSpanId).toBe("00f067aa0ba902b7");
    } finally {
      await collector.close();
    }
  });
});
