/**
 * `npm run bench:concurrency`: turns per second and p50/p95 turn latency at concurrency 1, 4, 16, 64 through the
 * whole local mesh (edge in wrangler dev, NATS, one GPU node process on the tiny model). Writes
 * test/bench/results/concurrency.json and concurrency.md. A benchmark, not a test: it asserts nothing.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { adapterEnvName } from "../../gpu-nodes/src/config/node-config.ts";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { measureConcurrencyLevel } from "./measure-concurrency-level.ts";
import { renderConcurrencyReport, type ConcurrencyReport } from "./render-concurrency-report.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { spawnBenchNode } from "./spawn-bench-node.ts";

const LEVELS = (process.env.MOL_BENCH_LEVELS ?? "1,4,16,64").split(",").map(Number);
/** Turns per level at least; a level gives every client at least two, so 64 clients make 128 turns. */
const LEVEL_TURNS = Number(process.env.MOL_BENCH_LEVEL_TURNS ?? 64);
const MAX_OUTPUT_TOKENS = 32;
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const KEY = "sk-bench-concurrency";

const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
const nats = await startNatsServer();
// The bench node runs 16 hops at once (MOL_MAX_CONCURRENT) and queues 256 more fairly by tenant (the default
// MOL_MAX_QUEUED); only beyond that does it answer `overloaded`.
const node = spawnBenchNode("node-1", nats.url, {
  MOL_BASE_MODEL: models.base,
  ...Object.fromEntries(Object.entries(models.adapters).map(([id, path]) => [adapterEnvName(id), path])),
});
await node.ready;
const edge = await spawnBenchEdge({ name: "concurrency", natsWsUrl: nats.wsUrl, devApiKey: KEY });
const post = (path: string, body: unknown) =>
  fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const levels = [];
try {
  // One unmeasured turn, so the first level does not pay for cold start (edge isolate, NATS, first slot).
  await measureConcurrencyLevel({
    post,
    concurrency: 1,
    turnsPerClient: 1,
    maxOutputTokens: MAX_OUTPUT_TOKENS,
  });
  for (const concurrency of LEVELS) {
    const turnsPerClient = Math.max(2, Math.ceil(LEVEL_TURNS / concurrency));
    let done = 0;
    levels.push(
      await measureConcurrencyLevel({
        post,
        concurrency,
        turnsPerClient,
        maxOutputTokens: MAX_OUTPUT_TOKENS,
        onTurn: () => reportBenchProgress(`concurrency ${concurrency}`, ++done, concurrency * turnsPerClient),
      }),
    );
  }
} finally {
  await edge.stop();
  await node.stop();
  await nats.dispose();
}

const report: ConcurrencyReport = {
  command: describeBenchCommand("bench:concurrency", ["MOL_BENCH_LEVELS", "MOL_BENCH_LEVEL_TURNS"]),
  machine: collectMachineFacts(),
  settings: {
    path: "client → edge (wrangler dev) → NATS → 1 GPU node process",
    model: "generated tiny llama",
    nodeThreads: 1,
    nodeMaxConcurrentHops: 16,
    maxOutputTokens: MAX_OUTPUT_TOKENS,
    minTurnsPerLevel: LEVEL_TURNS,
  },
  levels,
};
await writeFile(join(OUT_DIR, "concurrency.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "concurrency.md"), renderConcurrencyReport(report));
process.stdout.write(renderConcurrencyReport(report));
