/**
 * `npm run bench:fleet`: N GPU node processes, M conversations of T routed turns, with the edge's adapter-affine
 * placement versus a plain NATS queue group (random node). Reports the cached / prompt token ratio against the
 * ideal (every previous view of the same (conversation, adapter) reused), p50/p95 time to first token, and the
 * max/min hops per node. Writes test/bench/results/fleet.json and fleet.md. A benchmark, not a test.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { adapterEnvName } from "../../gpu-nodes/src/config/node-config.ts";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { renderFleetReport, type FleetModeResult } from "./render-fleet-report.ts";
import { spawnBenchNode } from "./spawn-bench-node.ts";
import { percentile, round, sum } from "./stats.ts";
import { measureFleetRun, type HopSample } from "./measure-fleet-run.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";

const NODES = Number(process.env.MOL_BENCH_NODES ?? 4);
const CONVERSATIONS = Number(process.env.MOL_BENCH_CONVERSATIONS ?? 64);
const TURNS = Number(process.env.MOL_BENCH_TURNS ?? 4);
const CONCURRENCY = Number(process.env.MOL_BENCH_CONCURRENCY ?? 8);
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const KEY = "sk-bench-fleet";

const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
const modelEnv = {
  MOL_BASE_MODEL: models.base,
  ...Object.fromEntries(Object.entries(models.adapters).map(([id, path]) => [adapterEnvName(id), path])),
};

async function runMode(mode: "affinity" | "queue-group"): Promise<FleetModeResult> {
  const nats = await startNatsServer();
  const nodes = Array.from({ length: NODES }, (_, i) => spawnBenchNode(`node-${i + 1}`, nats.url, modelEnv));
  await Promise.all(nodes.map((n) => n.ready));
  const edge = await spawnBenchEdge({
    name: "fleet",
    natsWsUrl: nats.wsUrl,
    devApiKey: KEY,
    vars: { MOL_PLACEMENT: mode },
  });
  try {
    process.stderr.write(`${mode}: ${CONVERSATIONS} conversations × ${TURNS} turns on ${NODES} nodes…\n`);
    const hops = await measureFleetRun({
      baseUrl: edge.url,
      apiKey: KEY,
      conversations: CONVERSATIONS,
      turns: TURNS,
      concurrency: CONCURRENCY,
      onConversationDone: (done) => reportBenchProgress(`${mode} (conversations)`, done, CONVERSATIONS),
    });
    return summarize(mode, hops);
  } finally {
    await edge.stop();
    await Promise.all(nodes.map((n) => n.stop()));
    await nats.dispose();
  }
}

function summarize(mode: FleetModeResult["mode"], hops: HopSample[]): FleetModeResult {
  const perNode = new Map<string, number>();
  for (const hop of hops) perNode.set(hop.nodeId, (perNode.get(hop.nodeId) ?? 0) + 1);
  const loads = [...perNode.values()];
  const ttft = hops.filter((h) => h.hop === "answer").map((h) => h.ttftMs ?? 0);
  // Ratios over hops that have a previous view to reuse: a pair's first hop has nothing of its own to reuse.
  const repeat = hops.filter((h) => h.idealCachedTokens !== undefined);
  const prompt = sum(repeat.map((h) => h.promptTokens));
  const cached = sum(repeat.map((h) => h.cachedTokens));
  const ideal = sum(repeat.map((h) => h.idealCachedTokens ?? 0));
  return {
    mode,
    hops: hops.length,
    promptTokens: prompt,
    cachedTokens: cached,
    idealCachedTokens: ideal,
    cachedShareOfPrompt: round(cached / prompt, 3),
    shareOfIdeal: round(cached / ideal, 3),
    ttftP50Ms: round(percentile(ttft, 50)),
    ttftP95Ms: round(percentile(ttft, 95)),
    hopsPerNode: Object.fromEntries([...perNode.entries()].sort()),
    maxMinLoad: round(Math.max(...loads) / Math.min(...loads), 2),
  };
}

const results = [await runMode("affinity"), await runMode("queue-group")];
const report = {
  command: describeBenchCommand("bench:fleet", [
    "MOL_BENCH_NODES",
    "MOL_BENCH_CONVERSATIONS",
    "MOL_BENCH_TURNS",
    "MOL_BENCH_CONCURRENCY",
  ]),
  machine: collectMachineFacts(),
  settings: {
    nodes: NODES,
    conversations: CONVERSATIONS,
    turns: TURNS,
    concurrency: CONCURRENCY,
    model: "generated tiny llama",
  },
  results,
};
await writeFile(join(OUT_DIR, "fleet.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "fleet.md"), renderFleetReport(report));
process.stdout.write(renderFleetReport(report));
