/**
 * `npm run bench:node`: the GPU node on the generated tiny model, over a real nats-server.
 * Writes test/bench/results/node.json and node.md. A benchmark, not a test: it asserts nothing.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { defaultThreadCount } from "../../gpu-nodes/src/config/node-config.ts";
import { DEFAULT_ADAPTER_IDS, WIRE_VERSION } from "../../schema/wire/v1/index.ts";
import { requestRoute } from "../../workers/src/gpu/request-route.ts";
import { ensureTestModels } from "../../gpu-nodes/src/models/ensure-test-models.ts";
import { answerInput, collectAnswer } from "../harness/collect-answer.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { startTestNode } from "../harness/start-test-node.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { percentile, round, sum } from "./stats.ts";
import { measureKvBytesPerSlot } from "./measure-kv-bytes.ts";
import { renderNodeReport } from "./render-node-report.ts";

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
}

// 2. Route hop latency, measured by the requester (NATS round trip included).
const routeMs: number[] = [];
for (let i = 0; i < ROUTES; i++) {
  const started = performance.now();
  await requestRoute(t.client, {
    version: WIRE_VERSION,
    type: "route",
    requestId: `bench-route-${i}`,
    conversationId: `bench-route-${i % SLOTS}`,
    view: `<route>\nuser: request ${i} about ${["code", "a plan", "a widget", "hello"][i % 4]}\nlabel: `,
    timeoutMs: 10_000,
  });
  routeMs.push(performance.now() - started);
}

// 3. KV reuse over a growing conversation, per adapter. The ideal reuses everything already in the slot:
// the previous view plus the previous answer (capped: the last prompt token is always evaluated).
const reuse = [];
for (const adapter of DEFAULT_ADAPTER_IDS) {
  let view = `system: you are the ${adapter} specialist.\n`;
  let prompt = 0;
  let cached = 0;
  let ideal = 0;
  let previous = { prompt: 0, completion: 0 };
  for (let turn = 0; turn < TURNS; turn++) {
    view += `user: turn ${turn}, please continue.\nassistant:`;
    const { text, finish } = await collectAnswer(
      t.client,
      answerInput(`reuse-${adapter}`, adapter, view, { sampling: { maxTokens: 16, temperature: 0 } }),
    );
    prompt += finish.usage.promptTokens;
    cached += finish.usage.cachedPromptTokens;
    ideal += turn === 0 ? 0 : Math.min(previous.prompt + previous.completion, finish.usage.promptTokens - 1);
    previous = { prompt: finish.usage.promptTokens, completion: finish.usage.completionTokens };
    view += `${text}\n`;
  }
  reuse.push({
    adapter,
    turns: TURNS,
    promptTokens: prompt,
    cachedPromptTokens: cached,
    idealCachedTokens: ideal,
    cachedShareOfPrompt: round(cached / prompt, 3),
    shareOfIdeal: round(cached / ideal, 3),
  });
}
const rssAfter = rss();

const fileBytes = (path: string) => statSync(path).size;
const memory = {
  baseFileBytes: fileBytes(models.base),
  adapterFileBytes: Object.fromEntries(Object.entries(models.adapters).map(([id, p]) => [id, fileBytes(p)])),
  kvBytesPerSlot: await measureKvBytesPerSlot(models.base, CONTEXT_SIZE),
  slotsPerAdapter: SLOTS,
  contexts: t.engine.adapters.length,
  rssBeforeLoadBytes: rssBefore,
  rssAfterLoadBytes: rssLoaded,
  rssAfterRunBytes: rssAfter,
};

await t.stop();
await nats.dispose();

const report = {
  command: "npm run bench:node",
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
  memory,
};
await writeFile(join(OUT_DIR, "node.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "node.md"), renderNodeReport(report));
process.stdout.write(renderNodeReport(report));
