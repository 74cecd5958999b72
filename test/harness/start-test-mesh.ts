import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { EdgeProcess } from "../../infra/local/spawn-edge.ts";
import { spawnEdgeOnFreePorts } from "./spawn-edge-on-free-ports.ts";
import { startNatsServer, type NatsServerHandle } from "./start-nats-server.ts";
import { startTestNode, type TestNode } from "./start-test-node.ts";

export const TEST_API_KEY = "sk-molmesh-test-0123456789abcdef";
/** The admin token a mesh started with `{ adminToken: TEST_ADMIN_TOKEN }` accepts. */
export const TEST_ADMIN_TOKEN = "mol-admin-test-0123456789abcdef";

export interface TestMesh {
  nats: NatsServerHandle;
  node: TestNode | undefined;
  edge: EdgeProcess;
  /** The edge's local Durable Object and D1 state (`wrangler dev --persist-to`). */
  persistDir: string;
  /** Every line `wrangler dev` printed (stdout and stderr): the Worker's request log lines among them. */
  edgeLogs: string[];
  /**
   * `fetch` against the edge with the test key (or `token`'s); `json` is the body, sent with POST unless `method`
   * says otherwise.
   */
  api(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
  /** Stops the edge and starts it again on the same local state (Durable Objects, D1), as a deploy or crash would. */
  restartEdge(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole mesh for edge tests: a real nats-server, a real GPU node (llama.cpp on the generated tiny model) and
 * the edge Worker in workerd via `wrangler dev`, each on free ports.
 */
export async function startTestMesh(
  options: {
    withNode?: boolean;
    edgeVars?: Record<string, string>;
    /** Enables the admin API (/v1/admin/*) with this token. */
    adminToken?: string;
    nodeOptions?: Parameters<typeof startTestNode>[0]["engine"];
    wrapEngine?: Parameters<typeof startTestNode>[0]["wrapEngine"];
  } = {},
): Promise<TestMesh> {
  const nats = await startNatsServer();
  const node =
    options.withNode === false
      ? undefined
      : await startTestNode({
          natsUrl: nats.url,
          models: inject("models"),
          engine: { contextSize: 4096, ...options.nodeOptions },
          ...(options.wrapEngine ? { wrapEngine: options.wrapEngine } : {}),
        });
  const persistDir = await mkdtemp(join(tmpdir(), "molmesh-edge-"));
  const edgeLogs: string[] = [];
  const edgeSettings = {
    onLog: (line: string) => void edgeLogs.push(line),
    natsWsUrl: nats.wsUrl,
    devApiKey: TEST_API_KEY,
    ...(options.adminToken ? { adminToken: options.adminToken } : {}),
    persistDir,
    ...(options.edgeVars ? { vars: options.edgeVars } : {}),
  };
  let edge = await spawnEdgeOnFreePorts(edgeSettings);
  return {
    nats,
    node,
    persistDir,
    edgeLogs,
    get edge() {
      return edge;
    },
    async restartEdge() {
      await edge.stop();
      edge = await spawnEdgeOnFreePorts(edgeSettings);
    },
    api: (path, init = {}) => {
      const { json, token, headers: given, ...rest } = init;
      // Headers() accepts every HeadersInit shape (record, pairs, Headers); the caller's values win.
      const headers = new Headers(given);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token ?? TEST_API_KEY}`);
      if (json !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
      return fetch(`${edge.url}${path}`, {
        ...(json === undefined ? {} : { method: "POST" }),
        ...rest,
        headers,
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    },
    async stop() {
      await edge.stop();
      await node?.stop();
      await nats.dispose();
      await rm(persistDir, { recursive: true, force: true });
    },
  };
}
