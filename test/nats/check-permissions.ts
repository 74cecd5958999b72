/**
 * Permission smoke test of infra/nats/ against servers that check-configs.sh started on loopback with throwaway
 * certificates and keys. It drives the real clients: the GPU node process (its .creds, TLS) and the edge's own
 * hop functions over wss (wsconnect, as in workerd), then checks what each role must NOT be able to do.
 *
 *   node --experimental-websocket --import tsx test/nats/check-permissions.ts cluster|supercluster
 *
 * Inputs (set by check-configs.sh): CHECK_CREDS_DIR, CHECK_LOGS (the servers' log files), and CHECK_TCP + CHECK_WS
 * (cluster) or CHECK_EU_TCP, CHECK_US_TCP, CHECK_US_WS (supercluster); NODE_EXTRA_CA_CERTS trusts the throwaway CA.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { credsAuthenticator, wsconnect, type NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import {
  NODE_QUEUE_GROUP,
  NODE_STATUS_BUCKET,
  WIRE_VERSION,
  buildGenerateSubject,
  buildNodeGenerateSubject,
} from "../../schema/wire/v2/index.ts";
import { requestGenerate } from "../../workers/src/nats/generate-client.ts";
import { streamGenerate } from "../../workers/src/nats/stream-generate.ts";
import {
  FIXTURE_MODEL_PATH,
  LOCAL_MODELS_DIR,
  REPO_ROOT,
  resolveLocalModels,
} from "../../infra/local/resolve-local-models.ts";

const mode = process.argv[2];
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run infra/nats/check-configs.sh)`);
  return value;
};
const credsDir = env("CHECK_CREDS_DIR");
let failures = 0;
let passes = 0;
const ok = (what: string) => {
  passes++;
  console.log(`  ok   ${what}`);
};
const fail = (what: string, detail: unknown) => {
  failures++;
  console.log(`  FAIL ${what}: ${detail instanceof Error ? detail.message : String(detail)}`);
};
const check = async (what: string, run: () => Promise<unknown>) => {
  try {
    await run();
    ok(what);
  } catch (error) {
    fail(what, error);
  }
};
/** Passes when `run` is refused (permission violation, authorization error or timeout of a dropped message). */
const denied = async (what: string, run: () => Promise<unknown>) => {
  try {
    await run();
    fail(`${what} is denied`, "it was allowed");
  } catch (error) {
    ok(`${what} is denied (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`);
  }
};

/** Lines the servers logged about refused publishes/subscriptions or failed logins, so far. */
const serverComplaints = async (): Promise<string[]> => {
  const logs = await Promise.all(
    env("CHECK_LOGS")
      .split(",")
      .map((file) => readFile(file, "utf8")),
  );
  return logs.flatMap((log) => log.split("\n")).filter((line) => /violation|authorization error/i.test(line));
};
const noComplaints = async (phase: string) => {
  const lines = await serverComplaints();
  if (lines.length === 0) ok(`the servers logged no violation or auth error during ${phase}`);
  else fail(`servers complained during ${phase}`, lines.slice(0, 5).join("\n"));
};

const creds = async (user: string) => credsAuthenticator(await readFile(join(credsDir, `${user}.creds`)));
const tcp = async (urls: string, user: string, name = user) =>
  connect({ servers: urls.split(","), name, authenticator: await creds(user), maxReconnectAttempts: 2 });
const ws = async (urls: string, user: string) =>
  wsconnect({
    servers: urls.split(","),
    name: user,
    authenticator: await creds(user),
    maxReconnectAttempts: 2,
  });
const base = () => ({
  version: WIRE_VERSION,
  type: "generate" as const,
  requestId: randomUUID(),
  slotKey: "check-permissions",
  timeoutMs: 20_000,
});
const route = () => ({
  ...base(),
  adapter: "l0",
  priority: "route" as const,
  prompt: "user: hello\nlabel: ",
  constraint: { type: "choice" as const, choices: ["chat", "agent", "coding", "genui"] },
  sampling: { maxTokens: 24, temperature: 0 },
});
const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => {
        reject(new Error(`${what}: no answer in ${ms} ms`));
      }, ms),
    ),
  ]);

async function createBucket(nc: NatsConnection, placementCluster?: string): Promise<void> {
  await new Kvm(nc).create(NODE_STATUS_BUCKET, {
    replicas: 3,
    ttl: 10_000,
    history: 1,
    ...(placementCluster ? { placement: { cluster: placementCluster, tags: [] } } : {}),
  });
  const info = await (await jetstreamManager(nc)).streams.info(`KV_${NODE_STATUS_BUCKET}`);
  const peers = 1 + (info.cluster?.replicas?.length ?? 0);
  if (info.config.num_replicas !== 3 || peers !== 3) throw new Error(`bucket has ${peers} peers, want 3`);
  if (placementCluster && info.cluster?.name !== placementCluster) {
    throw new Error(`bucket placed in ${info.cluster?.name}, want ${placementCluster}`);
  }
}

/** What FleetObject does: open the bucket, list keys, read each entry. */
async function readFleet(nc: NatsConnection): Promise<string[]> {
  const kv = await new Kvm(nc).open(NODE_STATUS_BUCKET);
  const live: string[] = [];
  for await (const key of await kv.keys()) {
    const entry = await kv.get(key);
    if (entry?.operation === "PUT") live.push(key);
  }
  return live.sort();
}

/** What the edge's fleet placement does (workers/src/fleet/watch-fleet.ts): watch node.* until the initial state. */
async function watchFleetKeys(nc: NatsConnection): Promise<string[]> {
  const kv = await new Kvm(nc).open(NODE_STATUS_BUCKET);
  const watcher = await kv.watch({ key: "node.*" });
  const keys: string[] = [];
  try {
    await withTimeout(
      (async () => {
        for await (const entry of watcher) {
          if (entry.operation === "PUT") keys.push(entry.key);
          if (entry.delta === 0) return;
        }
      })(),
      5_000,
      "kv.watch",
    );
  } finally {
    watcher.stop();
  }
  return keys.sort();
}

async function putKey(nc: NatsConnection, key: string): Promise<void> {
  const kv = await new Kvm(nc).create(NODE_STATUS_BUCKET);
  await withTimeout(kv.put(key, "{}"), 3_000, `put ${key}`);
}

/** Subscribes and waits: a refused subscription is closed by the client with the server's permission error. */
async function subscribeAndFlush(nc: NatsConnection, subject: string, queue?: string): Promise<void> {
  const sub = nc.subscribe(subject, queue ? { queue } : {});
  await nc.flush();
  const closed = await Promise.race([
    sub.closed,
    new Promise((resolve) => {
      setTimeout(() => {
        resolve("open");
      }, 500);
    }),
  ]);
  if (closed instanceof Error) throw closed;
  if (closed !== "open") throw new Error(`subscription to ${subject} was closed`);
  sub.unsubscribe();
}

async function startGpuNode(nodeId: string, natsUrl: string) {
  const models = await resolveLocalModels(
    { MOL_BASE_MODEL: "tiny" },
    { modelsDir: LOCAL_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH },
  );
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "gpu-nodes", "src", "main.ts")], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...models.env,
      MOL_NODE_ID: nodeId,
      MOL_NATS_URL: natsUrl,
      MOL_NATS_CREDS: join(credsDir, `${nodeId}.creds`),
      MOL_THREADS: "1",
      MOL_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) resolve();
      });
      child.on("exit", (code) => {
        reject(new Error(`GPU node exited with ${code} before ready`));
      });
    }),
    120_000,
    "GPU node start",
  );
  return {
    async stop(): Promise<number | null> {
      const exited = new Promise<number | null>((resolve) => {
        child.on("exit", resolve);
      });
      child.kill("SIGTERM");
      return await withTimeout(exited, 20_000, "GPU node stop");
    },
  };
}

async function checkCluster(): Promise<void> {
  const tcpUrls = env("CHECK_TCP");
  const wsUrls = env("CHECK_WS");
  console.log("cluster: admin creates the heartbeat bucket (replicas 3)");
  const admin = await tcp(tcpUrls, "admin");
  await check("admin creates KV molmesh_nodes with 3 replicas", () => createBucket(admin));

  console.log("cluster: the real GPU node (gpu-node-a, TLS, .creds) and the edge's hop functions over wss");
  const node = await startGpuNode("gpu-node-a", tcpUrls);
  ok("GPU node gpu-node-a started: connected, subscribed, first heartbeat put");
  const edge = await ws(wsUrls, "edge");
  ok("edge connects over wss with its .creds");
  await check("edge: route-shaped request (queue group)", () => requestGenerate(edge, route()));
  await check("edge: route-shaped request (node subject gpu-node-a)", () =>
    requestGenerate(edge, route(), { nodeId: "gpu-node-a" }),
  );
  await check("edge: answer hop streams past one reply (allow_responses max)", async () => {
    let parts = 0;
    const input = { ...base(), adapter: "chat", priority: "answer" as const, prompt: "user: hi\nassistant:" };
    for await (const part of streamGenerate(edge, { ...input, sampling: { maxTokens: 48 } })) {
      parts++;
      if (part.type === "finish" && parts < 3) throw new Error(`only ${parts} parts`);
    }
    console.log(`         (${parts} parts)`);
  });
  await check("edge: summary-shaped request", () =>
    requestGenerate(edge, {
      ...base(),
      adapter: "chat",
      priority: "summary",
      prompt: "a conversation\nsummary:",
    }),
  );
  await check("edge: cancel (abort mid-answer publishes molmesh.v2.cancel)", async () => {
    const controller = new AbortController();
    const input = {
      ...base(),
      adapter: "chat",
      priority: "answer" as const,
      prompt: "user: go on\nassistant:",
    };
    try {
      for await (const part of streamGenerate(
        edge,
        { ...input, sampling: { maxTokens: 512 } },
        { signal: controller.signal },
      )) {
        if (part.type === "text-delta") controller.abort();
      }
    } catch (error) {
      if (!(error instanceof Error) || error.name !== "CancelledError") throw error;
    }
  });
  await check("edge: reads the fleet like FleetObject (open, keys, get)", async () => {
    const live = await readFleet(edge);
    if (!live.includes("node.gpu-node-a")) throw new Error(`live nodes: ${live.join(",")}`);
  });

  await check("edge: watches the fleet like watch-fleet.ts (kv.watch node.*)", async () => {
    const keys = await watchFleetKeys(edge);
    if (!keys.includes("node.gpu-node-a")) throw new Error(`watched: ${keys.join(",")}`);
  });
  await noComplaints("the allowed operations");

  console.log("cluster: what each role must not do");
  await denied("edge: put a heartbeat", () => putKey(edge, "node.fake"));
  await denied("edge: create a stream", async () =>
    (await jetstreamManager(edge)).streams.add({ name: "EVIL", subjects: ["evil.>"] }),
  );
  await denied("edge: subscribe to hop requests", () => subscribeAndFlush(edge, buildGenerateSubject()));
  await denied("edge: connect over TCP (websocket only)", () => tcp(tcpUrls, "edge"));
  const nodeB = await tcp(tcpUrls, "gpu-node-b");
  await check("gpu-node-b: put its own heartbeat", () => putKey(nodeB, "node.gpu-node-b"));
  await check("gpu-node-b: subscribe to its own node subject", () =>
    subscribeAndFlush(nodeB, buildNodeGenerateSubject("gpu-node-b")),
  );
  await check("gpu-node-b: join the queue group", () =>
    subscribeAndFlush(nodeB, buildGenerateSubject(), NODE_QUEUE_GROUP),
  );
  await denied("gpu-node-b: put gpu-node-a's heartbeat", () => putKey(nodeB, "node.gpu-node-a"));
  await denied("gpu-node-b: subscribe to gpu-node-a's subject", () =>
    subscribeAndFlush(nodeB, buildNodeGenerateSubject("gpu-node-a")),
  );
  await denied("gpu-node-b: subscribe to hop requests outside the queue group", () =>
    subscribeAndFlush(nodeB, buildGenerateSubject()),
  );
  await denied("gpu-node-b: send a hop request", () =>
    nodeB.request(buildGenerateSubject(), "{}", { timeout: 2_000 }),
  );
  await denied("gpu-node-b: delete the bucket", async () =>
    (await jetstreamManager(nodeB)).streams.delete(`KV_${NODE_STATUS_BUCKET}`),
  );
  await denied("gpu-node-b: connect over wss (TCP only)", () => ws(wsUrls, "gpu-node-b"));
  await denied("anonymous connection", () =>
    connect({ servers: tcpUrls.split(","), maxReconnectAttempts: 1 }),
  );

  const complaints = await serverComplaints();
  if (complaints.length > 0) ok(`the servers logged the refusals (${complaints.length} lines)`);
  else fail("the servers logged the refusals", "no violation lines in the logs");

  console.log("cluster: graceful stop");
  await check("GPU node exits 0 on SIGTERM and removes its heartbeat", async () => {
    const code = await node.stop();
    if (code !== 0) throw new Error(`exit code ${code}`);
    const live = await readFleet(admin);
    if (live.includes("node.gpu-node-a")) throw new Error("heartbeat still there");
  });
  await Promise.all([edge.close(), nodeB.close(), admin.close()]);
}

async function checkSupercluster(): Promise<void> {
  const euTcp = env("CHECK_EU_TCP");
  const usTcp = env("CHECK_US_TCP");
  const usWs = env("CHECK_US_WS");
  console.log("supercluster: one bucket placed in eu, written and read from us through the gateway");
  const admin = await tcp(usTcp, "admin");
  await check("admin (connected in us) creates the bucket placed in eu, 3 replicas", () =>
    createBucket(admin, "eu"),
  );
  const nodeEu = await tcp(euTcp, "gpu-node-a");
  const nodeUs = await tcp(usTcp, "gpu-node-b");
  await check("gpu-node-a (eu) puts its heartbeat", () => putKey(nodeEu, "node.gpu-node-a"));
  await check("gpu-node-b (us) puts its heartbeat across the gateway", () =>
    putKey(nodeUs, "node.gpu-node-b"),
  );
  const edge = await ws(usWs, "edge");
  await check("edge (us) reads both heartbeats", async () => {
    const live = await readFleet(edge);
    if (live.join(",") !== "node.gpu-node-a,node.gpu-node-b") throw new Error(`live: ${live.join(",")}`);
  });
  await check("edge (us) watches both heartbeats", async () => {
    const keys = await watchFleetKeys(edge);
    if (keys.join(",") !== "node.gpu-node-a,node.gpu-node-b") throw new Error(`watched: ${keys.join(",")}`);
  });

  console.log("supercluster: queue-group requests stay in the requester's region while it has a listener");
  const serve = (nc: NatsConnection, region: string) =>
    nc.subscribe(buildGenerateSubject(), {
      queue: NODE_QUEUE_GROUP,
      callback: (_e, m) => {
        m.respond(region);
      },
    });
  serve(nodeEu, "eu");
  const usSub = serve(nodeUs, "us");
  await Promise.all([nodeEu.flush(), nodeUs.flush()]);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const ask = async (n: number) => {
    const regions: string[] = [];
    for (let i = 0; i < n; i++) {
      regions.push((await edge.request(buildGenerateSubject(), "{}", { timeout: 3_000 })).string());
    }
    return [...new Set(regions)].join(",");
  };
  await check("20 requests from us, listeners in both regions: all answered in us", async () => {
    const seen = await ask(20);
    if (seen !== "us") throw new Error(`answered by ${seen}`);
  });
  await usSub.drain();
  await nodeUs.flush();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await check("20 requests from us, no listener left in us: all cross to eu", async () => {
    const seen = await ask(20);
    if (seen !== "eu") throw new Error(`answered by ${seen}`);
  });
  await noComplaints("the supercluster checks");
  await Promise.all([edge.close(), nodeEu.close(), nodeUs.close(), admin.close()]);
}

try {
  if (mode === "cluster") await checkCluster();
  else if (mode === "supercluster") await checkSupercluster();
  else throw new Error("usage: check-permissions.ts cluster|supercluster");
} catch (error) {
  fail("unexpected error", error);
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
