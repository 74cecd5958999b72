/**
 * `npm run bench:node`: the GPU node on the generated tiny model, over a real nats-server.
 * Writes test/bench/results/node.json and node.md. A benchmark, not a test: it asserts nothing.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { defaultThreadCount } from "../../gpu-nodes/src/config/node-config.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { answerInput, collectAnswer } from "../harness/generate-requests.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { startTestNode } from "../harness/start-test-node.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { percentile, round, sum } from "./stats.ts";
import { measureKvBytesPerSlot } from "./measure-kv-bytes.ts";
import { renderNodeReport } from "./render-node-report.ts";
import { measureKvReuse, type KvReuseRow } from "./measure-kv-reuse.ts";
import { renderAppendOnlyView, renderNaiveView } from "./render-naive-view.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { measureRouteLatency } from "./measure-route-latency.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";

const THREADS = Number(process.env.MOL_BENCH_THREADS ?? defaultThreadCount(availableParallelism()));
const TURNS = Number(process.env.MOL_BENCH_TURNS ?? 30);
const ROUTES = Number(process.env.MOL_BENCH_ROUTES ?? 200);
const CONTEXT_SIZE = 4096;
const SLOTS = 4;
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");

const rss = () => process.memoryUsage().rss;
const rssBefore = rss();
const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
const nats = await startNatsServer();
const t = await startTestNode({
  natsUrl: nats.url,
  models,
  engine: { threads: THREADS, contextSize: CONTEXT_SIZE, slotsPerAdapter: SLOTS },
  node: { maxConcurrent: 16 },
});
const rssLoaded = rss();

// 1. Decode and prefill speed per adapter (greedy, 128 new tokens on a fresh slot).
const speed = [];
for (const adapter of DEFAULT_ADAPTER_IDS) {
  const view = `system: you are ${adapter}.\n${"user: some context to prefill. ".repeat(20)}\nassistant:`;
  const { finish } = await collectAnswer(
    t.client,
    answerInput(`speed-${adapter}`, adapter, view, { sampling: { maxTokens: 128, temperature: 0 } }),
  );
  speed.push({
    adapter,
    promptTokens: finish.usage.promptTokens,
    prefillTokensPerSecond: round(finish.usage.evaluatedPromptTokens / (finish.timings.prefillMs / 1000), 1),
    completionTokens: finish.usage.completionTokens,
    decodeTokensPerSecond: round(finish.usage.completionTokens / (finish.timings.decodeMs / 1000), 1),
  });
  reportBenchProgress("speed", speed.length, DEFAULT_ADAPTER_IDS.length);
}

// 2. Route hop latency, measured by the requester (NATS round trip included).
const routeMs = await measureRouteLatency(t.client, ROUTES, SLOTS);

// 3. KV reuse over a growing conversation, per adapter: with the append-only view molmesh builds, then with a
// naive view builder that re-renders the prompt with a changing header (the baseline).
const reuse: KvReuseRow[] = [];
const naiveReuse: KvReuseRow[] = [];
let reuseTurns = 0;
const onTurn = () => reportBenchProgress("KV reuse", ++reuseTurns, 2 * TURNS * DEFAULT_ADAPTER_IDS.length);
for (const adapter of DEFAULT_ADAPTER_IDS) {
  const run = { client: t.client, adapter, turns: TURNS, onTurn };
  reuse.push(
    await measureKvReuse({
      ...run,
      conversationId: `reuse-${adapter}`,
      renderView: (history, user) => renderAppendOnlyView(adapter, history, user),
    }),
  );
  naiveReuse.push(
    await measureKvReuse({
      ...run,
      conversationId: `naive-${adapter}`,
      renderView: (history, user) => renderNaiveView(adapter, history, user),
    }),
  );
}
const rssAfter = rss();

const fileBytes = (path: string) => statSync(path).size;
const memory = {
  baseFileBytes: fileBytes(models.base),
  adapterFileBytes: Object.fromEntries(Object.entries(models.adapters).map(([id, p]) => [id, fileBytes(p)])),
  kvBytesPerSlot: await measureKvBytesPerSlot(models.base, CONTEXT_SIZE),
  slotsPerAdapter: SLOTS,
  contexts: t.engine.adapters().length,
  rssBeforeLoadBytes: rssBefore,
  rssAfterLoadBytes: rssLoaded,
  rssAfterRunBytes: rssAfter,
};

await t.stop();
await nats.dispose();

const report = {
  command: describeBenchCommand("bench:node", ["MOL_BENCH_THREADS", "MOL_BENCH_TURNS", "MOL_BENCH_ROUTES"]),
  machine: collectMachineFacts(),
  settings: {
    model: "generated tiny llama (random weights)",
    threads: THREADS,
    contextSize: CONTEXT_SIZE,
    slots: SLOTS,
  },
  speed,
  route: {
    samples: routeMs.length,
    p50Ms: round(percentile(routeMs, 50)),
    p95Ms: round(percentile(routeMs, 95)),
    meanMs: round(sum(routeMs) / routeMs.length),
  },
  reuse,
  naiveReuse,
  memory,
};
await writeFile(join(OUT_DIR, "node.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "node.md"), renderNodeReport(report));
process.stdout.write(renderNodeReport(report));
