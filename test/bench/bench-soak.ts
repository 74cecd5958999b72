/**
 * `npm run bench:soak`: T streamed turns at concurrency C over N GPU node processes, one node SIGKILLed every K
 * turns (and a fresh one started, so N stay) and nats-server restarted once; then every acknowledged response
 * is reconciled against the stored items through the public API. Writes test/bench/results/soak.json and soak.md
 * and exits non-zero when an event was lost or duplicated. Not in CI: the full size runs for many minutes.
 * Flags: --turns, --concurrency, --nodes, --kill-every, --turns-per-conversation, --words, --word-ms, --out,
 * --max-minutes (stop starting turns then and report those driven), --edge-log (wrangler's output to a file).
 */
import { appendFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnGpuNode, type GpuNodeProcess } from "../../infra/local/spawn-gpu-node.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { driveSoakTurns } from "./drive-soak-turns.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { reconcileSoak } from "./reconcile-soak.ts";
import { renderSoakReport, type SoakChaosEvent, type SoakReport } from "./render-soak-report.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { percentile, round } from "./stats.ts";

const { values: flags } = parseArgs({
  options: {
    turns: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "64" },
    nodes: { type: "string", default: "4" },
    "kill-every": { type: "string", default: "1000" },
    "turns-per-conversation": { type: "string", default: "10" },
    words: { type: "string", default: "32" },
    "word-ms": { type: "string", default: "25" },
    "max-minutes": { type: "string" },
    "edge-log": { type: "string" },
    out: {
      type: "string",
      default: process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results"),
    },
  },
});
const TURNS = Number(flags.turns);
const CONCURRENCY = Number(flags.concurrency);
const NODES = Number(flags.nodes);
const KILL_EVERY = Number(flags["kill-every"]);
/** Halfway between two kills in the middle of the run, so its failures are told apart from theirs. */
const NATS_RESTART_AT = Math.floor(TURNS / 2 / KILL_EVERY) * KILL_EVERY + Math.floor(KILL_EVERY / 2);
const MAX_MS = flags["max-minutes"] === undefined ? undefined : Number(flags["max-minutes"]) * 60_000;
const KEY = "sk-bench-soak";
const log = (line: string) =>
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const nats = await startNatsServer();
let spawned = 0;
const nodes = new Map<string, GpuNodeProcess>();
const startNode = () => {
  const node = spawnGpuNode({
    nodeId: `soak-${++spawned}`,
    natsUrl: nats.url,
    entryScript: join(REPO_ROOT, "test", "bench", "soak-node-main.ts"),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      MOL_SOAK_WORDS: flags.words,
      MOL_SOAK_WORD_MS: flags["word-ms"],
    },
  });
  nodes.set(node.nodeId, node);
  return node;
};
await Promise.all(Array.from({ length: NODES }, () => startNode().ready));
const edgeLog = flags["edge-log"];
const edge = await spawnBenchEdge({
  name: "soak",
  natsWsUrl: nats.wsUrl,
  devApiKey: KEY,
  ...(edgeLog
    ? { onLog: (line: string) => appendFileSync(edgeLog, `${new Date().toISOString()} ${line}\n`) }
    : {}),
});

const started = performance.now();
const chaos: SoakChaosEvent[] = [];
let nextKill = KILL_EVERY;
let natsRestarted = false;
const chaosRuns: Array<Promise<void>> = [];
const sinceStart = () => Math.round((performance.now() - started) / 100) / 10;
const killOne = async (atTurn: number) => {
  const live = [...nodes.values()];
  const victim = live[Math.floor(Math.random() * live.length)] as GpuNodeProcess;
  nodes.delete(victim.nodeId);
  await victim.stop({ force: true });
  const restarting = performance.now();
  const replacement = startNode();
  await replacement.ready;
  chaos.push({
    atTurn,
    atS: sinceStart(),
    what: `SIGKILL ${victim.nodeId}; ${replacement.nodeId} ready in ${Math.round(performance.now() - restarting)} ms`,
  });
  log(chaos.at(-1)?.what ?? "");
};
const restartNats = async (atTurn: number) => {
  const stopping = performance.now();
  await nats.stop();
  await new Promise((r) => setTimeout(r, 1_000));
  await nats.start();
  chaos.push({
    atTurn,
    atS: sinceStart(),
    what: `nats-server restarted (down ${Math.round(performance.now() - stopping)} ms)`,
  });
  log(chaos.at(-1)?.what ?? "");
};

log(`${TURNS} turns at concurrency ${CONCURRENCY} on ${NODES} nodes, a kill every ${KILL_EVERY} turns`);
let driven: Awaited<ReturnType<typeof driveSoakTurns>>;
try {
  driven = await driveSoakTurns({
    baseUrl: edge.url,
    apiKey: KEY,
    turns: TURNS,
    turnsPerConversation: Number(flags["turns-per-conversation"]),
    concurrency: CONCURRENCY,
    maxOutputTokens: 64,
    epoch: started,
    stopped: () => MAX_MS !== undefined && performance.now() - started > MAX_MS,
    onTurn: (turn, done) => {
      if (turn.attemptErrors.length > 0)
        log(`turn ${turn.responseId ?? turn.conversation} ${turn.outcome}: ${turn.attemptErrors.join(", ")}`);
      if (done >= nextKill && nextKill < TURNS) {
        nextKill += KILL_EVERY;
        chaosRuns.push(killOne(done));
      }
      // A run cut short by --max-minutes still gets its restart: at half its time if the turn count is far off.
      const halfTime = MAX_MS !== undefined && performance.now() - started > MAX_MS / 2;
      if (!natsRestarted && (done >= NATS_RESTART_AT || halfTime)) {
        natsRestarted = true;
        chaosRuns.push(restartNats(done));
      }
      if (done % 100 === 0) {
        reportBenchProgress("turns", done, TURNS);
        log(`${done}/${TURNS} turns`);
      }
    },
  });
  await Promise.all(chaosRuns);
} catch (error) {
  await shutdown();
  throw error;
}
const seconds = (performance.now() - started) / 1000;
log(`driven in ${Math.round(seconds)} s; reconciling ${driven.conversations.length} conversations…`);
const get = async (path: string) => {
  const response = await fetch(`${edge.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<unknown>;
};
const reconciliation = await reconcileSoak({
  get,
  conversations: driven.conversations,
  turns: driven.turns,
  concurrency: 8,
});
await shutdown();

const countBy = (values: readonly string[]) => {
  const counts: Record<string, number> = {};
  for (const v of [...values].sort()) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
};
const acknowledged = driven.turns.filter((t) => t.outcome === "completed" || t.outcome === "incomplete");
const ms = acknowledged.map((t) => t.ms);
const report: SoakReport = {
  command: ["npm run bench:soak", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(
    " ",
  ),
  machine: collectMachineFacts(),
  settings: {
    turns: TURNS,
    concurrency: CONCURRENCY,
    nodes: NODES,
    killEvery: KILL_EVERY,
    natsRestartAt: NATS_RESTART_AT,
    turnsPerConversation: Number(flags["turns-per-conversation"]),
    ...(MAX_MS === undefined ? {} : { maxMinutes: MAX_MS / 60_000 }),
    engine: `scripted (${flags.words} words, ${flags["word-ms"]} ms apart)`,
  },
  seconds: round(seconds, 1),
  turnsPerSecond: round(driven.turns.length / seconds, 2),
  turns: {
    driven: driven.turns.length,
    acknowledged: acknowledged.length,
    failed: driven.turns.length - acknowledged.length,
    retried: driven.turns.filter((t) => t.attemptErrors.length > 0 && acknowledged.includes(t)).length,
    takenOver: driven.turns.filter((t) => t.takeovers > 0).length,
    streamAnomalies: driven.turns.reduce((n, t) => n + t.anomalies.length, 0),
  },
  latencyMs: {
    p50: round(percentile(ms, 50)),
    p99: round(percentile(ms, 99)),
    max: round(Math.max(...ms)),
  },
  errorsByKind: countBy(driven.turns.flatMap((t) => (t.errorKind ? [t.errorKind] : []))),
  retriedErrorsByKind: countBy(
    driven.turns.flatMap((t) => t.attemptErrors.slice(0, t.errorKind ? -1 : undefined)),
  ),
  conversationErrors: countBy(driven.conversationErrors),
  slowest: [...driven.turns]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 8)
    .map((t) => ({
      endedAtS: t.endedAtS,
      ms: Math.round(t.ms),
      outcome: t.outcome,
      attempts: t.attemptErrors.join(", ") || "one",
    })),
  unacknowledged: driven.turns
    .filter((t) => t.outcome !== "completed" && t.outcome !== "incomplete")
    .slice(0, 20)
    .map((t) => ({
      endedAtS: t.endedAtS,
      ms: Math.round(t.ms),
      outcome: t.outcome,
      attempts: t.attemptErrors.join(", "),
    })),
  anomalyExamples: driven.turns
    .flatMap((t) => t.anomalies.map((a) => `${t.responseId ?? "?"}: ${a}`))
    .slice(0, 10),
  chaos,
  reconciliation,
};
await writeFile(join(flags.out, "soak.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(flags.out, "soak.md"), renderSoakReport(report));
process.stdout.write(renderSoakReport(report));
const r = reconciliation;
process.exitCode =
  r.lost +
    r.duplicated +
    r.textMismatch +
    r.orderViolations +
    r.responseMismatch +
    report.turns.streamAnomalies >
  0
    ? 1
    : 0;

async function shutdown(): Promise<void> {
  await edge.stop();
  await Promise.all([...nodes.values()].map((n) => n.stop({ force: true })));
  await nats.dispose();
}
