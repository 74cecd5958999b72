/**
 * `npm start`: the whole local mesh on embedded defaults, with health checks and a clean Ctrl-C:
 * nats-server (client + WebSocket + JetStream), MOL_GPU_NODES GPU node processes, and the edge in workerd.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { checkFreePorts, type NeededPort } from "./check-free-ports.ts";
import { startGroupReaper, type GroupReaper } from "./group-reaper.ts";
import { createGroupRecord, findLeftovers } from "./leftover-groups.ts";
import { addGroupWatcher, killAllGroupsNow, stopForeignGroups, stopGroup } from "./process-group.ts";
import { join } from "node:path";
import {
  FIXTURE_MODEL_PATH,
  LOCAL_MODELS_DIR,
  REPO_ROOT,
  resolveLocalModels,
} from "./resolve-local-models.ts";
import { LOCAL_NATS_CONFIG, spawnNatsServer, type NatsServerProcess } from "./spawn-nats-server.ts";
import { createPullProgress } from "../cli/create-pull-progress.ts";
import { readLocalHarness } from "./read-local-harness.ts";
import { spawnEdge, type EdgeProcess } from "./spawn-edge.ts";
import { spawnGpuNode } from "./spawn-gpu-node.ts";
import { DEFAULT_BASE_MODEL } from "../../gpu-nodes/tools/models/model-catalog.ts";

const env = process.env;
const natsPort = Number(env.MOL_NATS_PORT ?? 4222);
const natsWsPort = Number(env.MOL_NATS_WS_PORT ?? 8089);
const nodeCount = Number(env.MOL_GPU_NODES ?? 1);
const edgePort = Number(env.MOL_EDGE_PORT ?? 8787);
const edgeInspectorPort = Number(env.MOL_EDGE_INSPECTOR_PORT ?? 9230);
/** local-1 serves Prometheus text on this port, local-2 on the next… (each prints its URL); 0 serves none. */
const metricsPort = Number(env.MOL_METRICS_PORT ?? 9464);
const devApiKey = env.MOL_DEV_API_KEY ?? "sk-molmesh-dev-local";
const adminToken = env.MOL_ADMIN_TOKEN ?? "mol-admin-dev-local";
/** NATS JetStream store and the edge's local Durable Object / D1 state. */
const stateDir = env.MOL_STATE_DIR ?? join(REPO_ROOT, ".cache");

/**
 * stdout may be a pipe whose reader goes away (`npm start | head -1`, `| tee` then Ctrl-C): the next write fails
 * with EPIPE, which stops the mesh like a signal does; nothing is written to stdout after that.
 */
let stdoutOpen = true;
const out = (text: string) => {
  if (stdoutOpen) process.stdout.write(text);
};
const say = (line: string) => out(`[molmesh] ${line}\n`);
/** Errors go to stderr as well, which outlives a closed stdout. */
const complain = (line: string) => {
  process.stderr.write(`[molmesh] ${line}\n`);
};

const children: ChildProcess[] = [];
let stopping: Promise<never> | undefined;
let edge: EdgeProcess | undefined;
/** Filled in as the start goes on; the stop stops what is there. */
const started: {
  nats?: NatsServerProcess;
  /** Stops this run's groups if it is killed without the chance to (group-reaper.ts); started before the first. */
  reaper?: GroupReaper;
} = {};

/** Stops the edge first (no new turns), then the GPU nodes (they drain), then NATS; every one by process group. */
const shutdown = (code: number): Promise<never> => (stopping ??= stop(code));
/** Between start steps: once stopping has begun, the start goes no further (the process exits when it is done). */
const unlessStopping = async (): Promise<void> => {
  if (stopping !== undefined) await stopping;
};

async function stop(code: number): Promise<never> {
  say("stopping…");
  // A child that ignores SIGTERM and SIGKILL alike (uninterruptible I/O) must not keep the launcher up forever.
  setTimeout(() => {
    complain("stopping took too long; killing what is left");
    process.exit(code === 0 ? 1 : code);
  }, 30_000).unref();
  await edge?.stop();
  await Promise.all(children.map((child) => stopGroup(child, 15_000)));
  await started.nats?.stop();
  started.reaper?.release();
  say("stopped");
  process.exit(code);
}
/**
 * One Ctrl-C can arrive twice: from the terminal's process group and again from npm, which forwards signals to
 * its script. Only a second signal this long after the first is a person's "now". (`npm start` runs this file
 * with `node --import tsx`, not the tsx CLI: that one relays a signal again and then SIGKILLs its child when the
 * child's acknowledgement takes over 30 ms, as it does on a loaded machine, so the stop never finished.)
 */
const REPEATED_SIGNAL_MS = 1_000;
let firstSignalAt: number | undefined;
// Each child leads its own process group, so the terminal's Ctrl-C reaches only this process; a second one while
// stopping means "now".
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    const now = Date.now();
    if (firstSignalAt !== undefined) {
      if (now - firstSignalAt >= REPEATED_SIGNAL_MS) process.exit(1);
      return;
    }
    // Stopping already (a closed stdout, a crash): a signal now is the second word.
    if (stopping !== undefined) process.exit(1);
    firstSignalAt = now;
    void shutdown(0);
  });
}
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  stdoutOpen = false;
  if (error.code !== "EPIPE") complain(`stdout failed: ${error.message}`);
  void shutdown(0);
});
const crash = (error: unknown) => {
  complain(`crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  if (stopping !== undefined) process.exit(1);
  void shutdown(1);
};
process.on("uncaughtException", crash);
process.on("unhandledRejection", crash);
// Whatever way this process ends (process.exit above, a crash during shutdown), no group it started outlives it.
process.on("exit", killAllGroupsNow);

/**
 * npm runs this under `sh -c`, and a SIGTERM sent to npm alone (a supervisor stopping `npm start`, `timeout npm
 * start`) reaches neither: npm exits and the mesh ran on, orphaned. So under npm the launcher watches the npm
 * process (its shell's parent, read from /proc on Linux) and stops as on a signal once it is gone.
 */
function findNpmProcess(): number | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, so read from its closing parenthesis): state, ppid.
    const parentOfShell = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return parentOfShell > 1 ? parentOfShell : undefined;
  } catch {
    return undefined;
  }
}
const npmProcess = findNpmProcess();
if (npmProcess !== undefined) {
  setInterval(() => {
    try {
      process.kill(npmProcess, 0);
    } catch {
      if (stopping === undefined) void shutdown(0);
    }
  }, 500).unref();
}

/**
 * What an earlier run of this checkout (this state directory) left running is stopped first, and said so; a launcher
 * of it that still runs is left alone, and this one does not start beside it (they would share its stores).
 */
await mkdir(stateDir, { recursive: true });
const groupRecordPath = join(stateDir, "launcher-groups.json");
const leftovers = findLeftovers(groupRecordPath);
if (leftovers.running) {
  complain(
    `cannot start: another launcher (pid ${leftovers.launcherPid}) runs with the state directory ${stateDir}; ` +
      "stop it first, or give this one its own MOL_STATE_DIR",
  );
  process.exit(1);
}
if (leftovers.groups.length > 0) {
  const listed = leftovers.groups.map((group) => `pid ${group.pgid} ${group.command}`).join(", ");
  say(`found processes left by an earlier run that did not stop them (${listed}); stopping them`);
  await stopForeignGroups(
    leftovers.groups.map((group) => group.pgid),
    5_000,
  );
}
// From here on every group this run starts is recorded for the next run, and watched by the reaper, which stops
// them if this process is killed without a chance to (SIGKILL).
const groupRecord = createGroupRecord(groupRecordPath);
const groupReaper = startGroupReaper();
started.reaper = groupReaper;
addGroupWatcher({
  watch(pgid, command) {
    groupReaper.watch(pgid);
    groupRecord.add(pgid, command);
  },
  forget(pgid) {
    groupReaper.forget(pgid);
    groupRecord.remove(pgid);
  },
});

const metricsPorts = metricsPort > 0 ? Array.from({ length: nodeCount }, (_, i) => metricsPort + i) : [];
const neededPorts: NeededPort[] = [
  { port: natsPort, what: "NATS client listener (MOL_NATS_PORT)" },
  { port: natsWsPort, what: "NATS WebSocket listener (MOL_NATS_WS_PORT)" },
  { port: edgePort, what: "edge (MOL_EDGE_PORT)" },
  { port: edgeInspectorPort, what: "edge inspector (MOL_EDGE_INSPECTOR_PORT)" },
  ...metricsPorts.map((port, i) => ({ port, what: `metrics of local-${i + 1} (MOL_METRICS_PORT)` })),
];
try {
  await checkFreePorts(neededPorts);
} catch (error) {
  complain(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const models = await resolveLocalModels(
  env,
  { modelsDir: LOCAL_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH },
  { report: say, progress: createPullProgress(process.stderr) },
);
if (models.fallback !== undefined) {
  say(
    `could not get ${DEFAULT_BASE_MODEL} (${models.fallback}); falling back to the generated tiny model ` +
      `(retry: npm run molmesh -- models pull ${DEFAULT_BASE_MODEL}; or MOL_BASE_MODEL=/path/model.gguf)`,
  );
}
if (models.generated) {
  say("Serving the project's generated tiny llama. Its weights are RANDOM:");
  say("answers are noise; routing, streaming, KV reuse and the APIs are real. To use a real model:");
  say(
    `  unset MOL_BASE_MODEL (${DEFAULT_BASE_MODEL}, the default), or MOL_BASE_MODEL=/path/model.gguf (or hf:<user>/<repo>/<file>.gguf) MOL_ADAPTER_CHAT=/path/lora.gguf … npm start`,
  );
  say(
    "  or MOL_ENGINE=openai-http MOL_ENGINE_FLAVOR=vllm|llama-server MOL_ENGINE_URL=http://host:port MOL_ENGINE_MODEL=<name> npm start",
  );
} else if (!env.MOL_BASE_MODEL) {
  say(`base model: ${models.description}. The LoRAs are small RANDOM deltas, one per specialist, until`);
  say(
    "trained ones replace them (MOL_ADAPTER_CHAT=/path/lora.gguf …); MOL_BASE_MODEL=tiny serves the tiny model.",
  );
}

const storeDir = join(stateDir, "nats");
await mkdir(storeDir, { recursive: true });
await unlessStopping();
started.nats = await spawnNatsServer({
  configPath: LOCAL_NATS_CONFIG,
  port: natsPort,
  wsPort: natsWsPort,
  storeDir,
});
const natsUrl = `nats://127.0.0.1:${natsPort}`;
say(`nats-server up: ${natsUrl} (WebSocket ws://127.0.0.1:${natsWsPort}, JetStream in ${storeDir})`);

const startNode = (index: number): Promise<void> => {
  const node = spawnGpuNode({
    nodeId: `local-${index}`,
    natsUrl,
    env: { ...env, ...models.env, MOL_METRICS_PORT: String(metricsPort > 0 ? metricsPort + index - 1 : 0) },
    onOutput: (text) => out(text.replace(/^(?=.)/gm, `[local-${index}] `)),
  });
  children.push(node.child);
  node.child.once("exit", (code) => {
    if (stopping === undefined) say(`local-${index} exited with code ${code}; the other nodes keep serving`);
  });
  return node.ready;
};

try {
  await unlessStopping();
  await Promise.all(Array.from({ length: nodeCount }, (_, i) => startNode(i + 1)));
} catch (error) {
  complain(`start failed: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
}
say(`${nodeCount} GPU node(s) ready on ${models.description}`);
try {
  await unlessStopping();
  edge = await spawnEdge({
    port: edgePort,
    inspectorPort: edgeInspectorPort,
    natsWsUrl: `ws://127.0.0.1:${natsWsPort}`,
    devApiKey,
    adminToken,
    persistDir: join(stateDir, "edge"),
    // The local mesh is a developer's machine: webhook endpoints may point at a receiver on 127.0.0.1.
    vars: { MOL_WEBHOOK_ALLOW_LOOPBACK: "true", ...(await readLocalHarness(env)) },
  });
  await waitForHealthy(`${edge.url}/healthz`);
} catch (error) {
  complain(`edge failed: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
}
await unlessStopping();
const base = `http://127.0.0.1:${edgePort}`;
say(`ready: ${base}  (GET ${base}/healthz is 200; Ctrl-C stops everything)`);
say(`dev API key: ${devApiKey}   admin token (POST ${base}/v1/admin/tenants): ${adminToken}`);
out(`
  curl -s ${base}/v1/chat/completions -H "authorization: Bearer ${devApiKey}" \\
    -H "content-type: application/json" -d '{"model":"mol","messages":[{"role":"user","content":"hello"}]}'

  import OpenAI from "openai";
  const client = new OpenAI({ baseURL: "${base}/v1", apiKey: "${devApiKey}" });
  const conversation = await client.conversations.create({});
  const response = await client.responses.create({ conversation: conversation.id, input: "hello" });
  console.log(response.output_text, (response as any).mol);

`);

async function waitForHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const status = await fetch(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not become healthy`);
}
