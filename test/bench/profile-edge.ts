/**
 * Profiles the edge Worker's CPU in workerd while it serves turns on the instant engine: connects to wrangler dev's
 * inspector (Chrome DevTools protocol), runs MOL_PROFILE_TURNS turns, and prints the self time by function of the
 * bundle wrangler built (.wrangler/tmp/dev-…/index.js, its line numbers). A dev tool, not a benchmark (the
 * profiler itself slows the isolate): it says where the edge's own milliseconds go, which workerd's clock cannot
 * (it advances only at I/O, see workers/src/lib/stage-timings.ts). `npm run profile:edge`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { spawnEdge } from "../../infra/local/spawn-edge.ts";
import { findFreePort } from "../harness/free-port.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { startInstantNode } from "./start-instant-node.ts";

const TURNS = Number(process.env.MOL_PROFILE_TURNS ?? 200);
const KEY = "sk-profile";
const nats = await startNatsServer();
const node = await startInstantNode(nats.url, "profile-instant");
const persistDir = await mkdtemp(join(tmpdir(), "molmesh-profile-"));
const inspectorPort = await findFreePort();
const edge = await spawnEdge({
  port: await findFreePort(),
  inspectorPort,
  natsWsUrl: nats.wsUrl,
  devApiKey: KEY,
  persistDir,
  vars: { MOL_DEFAULT_RPM: "1000000", MOL_DEFAULT_TPM: "1000000000" },
});
const post = async (path: string, body: unknown) => {
  const response = await fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string };
};

const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as Array<{
  webSocketDebuggerUrl: string;
  title?: string;
  id?: string;
}>;
process.stderr.write(`inspector targets: ${JSON.stringify(targets.map((t) => [t.title, t.id]))}\n`);
const target = targets[0];
if (!target) throw new Error("no inspector target");
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((resolve, reject) => {
  ws.once("open", resolve);
  ws.once("error", reject);
});
let nextId = 1;
const pending = new Map<number, (result: unknown) => void>();
ws.on("message", (data: Buffer) => {
  const message = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: unknown };
  if (message.id !== undefined) pending.get(message.id)?.(message.result ?? message.error);
});
const send = (method: string, params: object = {}) =>
  new Promise<unknown>((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });

const warm = await post("/v1/conversations", {});
for (let i = 0; i < 30; i++) await post("/v1/responses", { conversation: warm.id, input: `warm ${i}` });
const { id } = await post("/v1/conversations", {});
await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: 100 });
await send("Profiler.start");
const started = performance.now();
for (let i = 0; i < TURNS; i++)
  await post("/v1/responses", {
    conversation: id,
    input: `turn ${i}: a user message of ordinary length, asking something.`,
  });
const wallMs = performance.now() - started;
const { profile } = (await send("Profiler.stop")) as {
  profile: {
    nodes: Array<{
      id: number;
      callFrame: { functionName: string; url: string; lineNumber: number };
      hitCount?: number;
      children?: number[];
    }>;
    samples: number[];
    timeDeltas: number[];
    startTime: number;
    endTime: number;
  };
};
const profilePath = process.env.MOL_PROFILE_OUT ?? join(tmpdir(), "molmesh-edge.cpuprofile");
await writeFile(profilePath, JSON.stringify(profile));
console.log(`profile: ${profilePath} (open it in Chrome DevTools' Performance panel)`);
const byNode = new Map<number, number>();
profile.samples.forEach((nodeId, i) =>
  byNode.set(nodeId, (byNode.get(nodeId) ?? 0) + (profile.timeDeltas[i] ?? 0)),
);
const self = new Map<string, number>();
for (const n of profile.nodes) {
  const key = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + (byNode.get(n.id) ?? 0) / 1000);
}
const totalMs = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()]
  .filter(([k]) => k.startsWith("(idle)") || k.startsWith("(program)"))
  .reduce((a, [, v]) => a + v, 0);
console.log(
  `wall ${wallMs.toFixed(0)} ms for ${TURNS} turns (${(wallMs / TURNS).toFixed(2)} ms/turn); profiled ${totalMs.toFixed(0)} ms, idle/program ${idle.toFixed(0)} ms; busy ${((totalMs - idle) / TURNS).toFixed(2)} ms/turn`,
);
for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60))
  console.log(`${(v / TURNS).toFixed(3)} ms/turn  ${k}`);
ws.close();
await edge.stop();
await rm(persistDir, { recursive: true, force: true });
await node.stop();
await nats.dispose();
