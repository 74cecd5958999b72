/**
 * `npm run bench:concurrency`: turns per second, p50/p95 turn latency and errors by kind at concurrency 16, 64 and
 * 256 through the whole local mesh (edge in wrangler dev, NATS, one GPU node process on SmolLM2-135M-Instruct, or
 * the generated tiny model without it), then, in the same run, the physical limit: node-llama-cpp alone decoding
 * 16 sequences of one context at once on the same model and threads, with a short prompt and, per level, with the
 * context that level's hops held, along with the prefill rate, for a work-equivalent share of the limit. Writes
 * test/bench/results/concurrency.json and concurrency.md. A benchmark, not a test: it asserts nothing.
 */
import { appendFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { SPECIALIST_LABELS } from "../../schema/wire/v2/index.ts";
import { SMOLLM2_LABEL, findSmollm2Model } from "../harness/find-smollm2-model.ts";
import { findFreePort } from "../harness/free-port.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { measureConcurrencyLevel } from "./measure-concurrency-level.ts";
import { openRawDecoder, type RawBatchedDecodeRun } from "./measure-raw-decode.ts";
import {
  renderConcurrencyReport,
  type ConcurrencyLevelReport,
  type ConcurrencyReport,
} from "./render-concurrency-report.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { diffNodeTokens, scrapeNodeTokens, waitForIdleNode } from "./scrape-node-tokens.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { spawnBenchNode } from "./spawn-bench-node.ts";
import { round } from "./stats.ts";

const LEVELS = (process.env.MOL_BENCH_LEVELS ?? "16,64,256").split(",").map(Number);
/** Turns per level at least; every client makes at least MOL_BENCH_MIN_TURNS_PER_CLIENT (2) of them. */
const LEVEL_TURNS = Number(process.env.MOL_BENCH_LEVEL_TURNS ?? 64);
const MIN_TURNS_PER_CLIENT = Number(process.env.MOL_BENCH_MIN_TURNS_PER_CLIENT ?? 2);
/**
 * Unmeasured turns per client before each level's measured ones (MOL_BENCH_WARMUP_TURNS_PER_CLIENT, 1): a
 * conversation's first turn prefills its whole views from empty KV slots; the measured turns are the steady
 * state, where a view grows only by the last turn. Their prefill still counts, in its own column.
 */
const WARMUP_TURNS_PER_CLIENT = Number(process.env.MOL_BENCH_WARMUP_TURNS_PER_CLIENT ?? 1);
/** One thread, as the node's default on this 2-core machine; the raw decoder gets the same. */
const THREADS = Number(process.env.MOL_BENCH_THREADS ?? 1);
const MAX_OUTPUT_TOKENS = 32;
/** Hops the node runs at once; also the raw decoder's sequences, the batch the node can reach at best. */
const MAX_CONCURRENT = 16;
/**
 * The queue bound this bench documents (docs/architecture.md, "The queue bound"): a conversation holds at most two hops at a node (its
 * turn's route or answer, and the previous turn's summary), so a node admitting MAX_CONCURRENT and queueing
 * MAX_QUEUED hops never answers `overloaded` below (MAX_CONCURRENT + MAX_QUEUED) / 2 = 264 conversations.
 */
const MAX_QUEUED = 512;
/**
 * MOL_BENCH_SUMMARY_HOPS: the node's summary admission lane (MOL_MAX_CONCURRENT_SUMMARIES), summaries run beside
 * the MAX_CONCURRENT routes and answers; unset, summaries share MAX_CONCURRENT with them (the node's default).
 */
const SUMMARY_HOPS = process.env.MOL_BENCH_SUMMARY_HOPS;
const RAW_DECODE_TOKENS = 64;
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const KEY = "sk-bench-concurrency";
const KNOBS = [
  "MOL_BENCH_CONCURRENCY_MODEL",
  "MOL_BENCH_MODEL",
  "MOL_BENCH_LEVELS",
  "MOL_BENCH_LEVEL_TURNS",
  "MOL_BENCH_MIN_TURNS_PER_CLIENT",
  "MOL_BENCH_WARMUP_TURNS_PER_CLIENT",
  "MOL_BENCH_THREADS",
  "MOL_BENCH_HOP_TIMEOUT_MS",
  "MOL_BENCH_SUMMARY_HOPS",
];
/** A prompt SmolLM2 keeps answering at length under greedy decoding, so every raw sequence decodes the full count. */
const RAW_PROMPT =
  "system: you are a helpful assistant.\nuser: count from 1 to 500, one number per line.\nassistant: 1\n2\n3\n";
/** The same prompt counted on far enough to be cut at any context a level's hops hold (up to `contextSize`). */
const RAW_CONTEXT_PROMPT = `${RAW_PROMPT}${Array.from({ length: 6000 }, (_, i) => `${i + 4}\n`).join("")}`;

/**
 * `tiny` (the default) or `smollm2`. SmolLM2 is the default model, but on this 2-core machine, shared, its prefill
 * runs at ~60 tokens/s: 16 conversations' first route views (~400 tokens each) take a minute, past the route hop's
 * 10 s deadline, so the mesh levels measure deadline misses. The tiny model measures the mesh itself.
 */
const MODEL = process.env.MOL_BENCH_CONCURRENCY_MODEL ?? "tiny";
/**
 * Every hop deadline (edge and harness), when set; `smollm2` sets 120 s, so that its levels measure the engine's
 * throughput under queueing rather than which hops a slow CPU makes miss their 10 s route deadline.
 */
const HOP_TIMEOUT_MS = process.env.MOL_BENCH_HOP_TIMEOUT_MS ?? (MODEL === "smollm2" ? "120000" : undefined);
const smollm2 = MODEL === "smollm2" ? findSmollm2Model() : undefined;
if (MODEL === "smollm2" && !smollm2)
  throw new Error("MOL_BENCH_CONCURRENCY_MODEL=smollm2: no SmolLM2 GGUF found");
const basePath =
  smollm2 ?? (await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH })).base;
// Every adapter on the bare base (no MOL_ADAPTER_*: no SmolLM2 LoRA is trained yet, as in bench:smollm2), so the
// raw limit below runs the very weights the node runs.
// The smallest context the default harness fits; KV for 5 adapters × 16 sequences of it is ~4.4 GiB on SmolLM2.
const contextSize = smollm2 ? 2560 : 4096;

function liftHopDeadlines(ms: number): Record<string, string> {
  const specialist = { answerTimeoutMs: ms, summary: { timeoutMs: ms } };
  return {
    MOL_HOP_FIRST_PART_TIMEOUT_MS: String(ms),
    MOL_HOP_STALL_TIMEOUT_MS: String(ms),
    MOL_HOP_REPLY_TIMEOUT_MS: String(ms),
    MOL_HARNESS: JSON.stringify({
      router: { timeoutMs: ms },
      specialists: Object.fromEntries(SPECIALIST_LABELS.map((label) => [label, specialist])),
    }),
  };
}

async function measureRawBatched(sequences: number, contextTokens?: number): Promise<RawBatchedDecodeRun> {
  const raw = await openRawDecoder({ modelPath: basePath, threads: THREADS, contextSize, sequences });
  try {
    await raw.runBatched(RAW_PROMPT, 4); // warm-up: first-batch allocations
    return await raw.runBatched(
      contextTokens === undefined ? RAW_PROMPT : RAW_CONTEXT_PROMPT,
      RAW_DECODE_TOKENS,
      contextTokens === undefined ? {} : { contextTokens },
    );
  } finally {
    await raw.close();
  }
}

// Before and after the mesh, so a load change on the shared machine during the run shows as a spread.
const rawBefore = await measureRawBatched(MAX_CONCURRENT);

const nats = await startNatsServer();
const metricsPort = await findFreePort();
const node = spawnBenchNode("node-1", nats.url, {
  MOL_BASE_MODEL: basePath,
  MOL_THREADS: String(THREADS),
  MOL_CONTEXT_SIZE: String(contextSize),
  MOL_SLOTS_PER_ADAPTER: "12",
  MOL_SUMMARY_SLOTS_PER_ADAPTER: "4",
  MOL_MAX_CONCURRENT: String(MAX_CONCURRENT),
  MOL_MAX_QUEUED: String(MAX_QUEUED),
  ...(SUMMARY_HOPS === undefined ? {} : { MOL_MAX_CONCURRENT_SUMMARIES: SUMMARY_HOPS }),
  MOL_METRICS_PORT: String(metricsPort),
});
await node.ready;
const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
const edge = await spawnBenchEdge({
  name: "concurrency",
  natsWsUrl: nats.wsUrl,
  devApiKey: KEY,
  vars: HOP_TIMEOUT_MS === undefined ? {} : liftHopDeadlines(Number(HOP_TIMEOUT_MS)),
  // The edge's own output, for a run that needs to see why `wrangler dev` failed requests.
  ...(process.env.MOL_BENCH_EDGE_LOG
    ? { onLog: (line: string) => appendFileSync(process.env.MOL_BENCH_EDGE_LOG as string, `${line}\n`) }
    : {}),
});
const post = (path: string, body: unknown) =>
  fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const levels: Omit<ConcurrencyLevelReport, "rawAtContext" | "workEquivalent">[] = [];
let stoppedAt: string | undefined;
try {
  // One unmeasured turn, so the first level does not pay for cold start (edge isolate, NATS, first slot).
  await measureConcurrencyLevel({
    post,
    concurrency: 1,
    turnsPerClient: 1,
    maxOutputTokens: MAX_OUTPUT_TOKENS,
  });
  for (const concurrency of LEVELS) {
    const turnsPerClient = Math.max(MIN_TURNS_PER_CLIENT, Math.ceil(LEVEL_TURNS / concurrency));
    let done = 0;
    let before = await scrapeNodeTokens(metricsUrl);
    const level = await measureConcurrencyLevel({
      post,
      concurrency,
      turnsPerClient,
      warmupTurnsPerClient: WARMUP_TURNS_PER_CLIENT,
      // The warm-up's summaries end before the clock starts, so the level counts only its own hops.
      afterWarmup: async () => {
        await waitForIdleNode(metricsUrl);
        before = await scrapeNodeTokens(metricsUrl);
      },
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      onTurn: () => reportBenchProgress(`concurrency ${concurrency}`, ++done, concurrency * turnsPerClient),
    }).catch((error: unknown) => {
      // The levels measured so far still make a report.
      stoppedAt = `concurrency ${concurrency}: ${String(error)}`;
      return undefined;
    });
    if (level === undefined) break;
    const node = diffNodeTokens(await scrapeNodeTokens(metricsUrl), before);
    // The summaries of the last turns end after the last answer: until the node is idle, they are the level's too.
    const drainStarted = performance.now();
    await waitForIdleNode(metricsUrl);
    const drainSeconds = round((performance.now() - drainStarted) / 1000, 2);
    const drained = diffNodeTokens(await scrapeNodeTokens(metricsUrl), before);
    levels.push({
      ...level,
      node,
      drained: {
        ...drained,
        seconds: drainSeconds,
        nodeTokensPerSecond: round(drained.completionTokens / (level.wallSeconds + drainSeconds), 1),
      },
      nodeTokensPerSecond: round(node.completionTokens / level.wallSeconds, 1),
      answerTokensPerSecond: round(level.outputTokens / level.wallSeconds, 1),
    });
  }
} finally {
  await edge.stop();
  await node.stop();
  await nats.dispose();
}

const rawAfter = await measureRawBatched(MAX_CONCURRENT);
const rawTokensPerSecond = round((rawBefore.decodeTokensPerSecond + rawAfter.decodeTokensPerSecond) / 2, 1);

// Each level's own physical limit, after the mesh has stopped: as many sequences as the level can batch, each
// first holding the context the level's hops held on average, decoding, and its prefill rate.
const levelsWithRaw: ConcurrencyLevelReport[] = [];
for (const level of levels) {
  const contextTokens = Math.min(
    // At least 2, so the raw prefill times one token or more.
    Math.max(2, Math.round(level.drained.promptTokens / Math.max(1, level.drained.hops))),
    contextSize - RAW_DECODE_TOKENS - 1,
  );
  const run = await measureRawBatched(Math.min(level.concurrency, MAX_CONCURRENT), contextTokens);
  const rawAtContext = {
    sequences: run.sequences,
    contextTokens: run.promptTokens,
    decodeTokensPerSecond: round(run.decodeTokensPerSecond, 1),
    prefillTokensPerSecond: round(run.prefillTokensPerSecond, 1),
  };
  // What the level's work, its trailing summaries included, would take on node-llama-cpp alone at those rates.
  const rawSeconds =
    level.drained.completionTokens / run.decodeTokensPerSecond +
    level.drained.evaluatedPromptTokens / run.prefillTokensPerSecond;
  const seconds = level.wallSeconds + level.drained.seconds;
  levelsWithRaw.push({ ...level, rawAtContext, workEquivalent: round(rawSeconds / seconds, 3) });
}

const report: ConcurrencyReport = {
  command: describeBenchCommand("bench:concurrency", KNOBS),
  machine: collectMachineFacts(),
  settings: {
    path: "client → edge (wrangler dev) → NATS → 1 GPU node process",
    model: `${smollm2 ? SMOLLM2_LABEL : "generated tiny llama"}, every adapter on the bare base`,
    nodeThreads: THREADS,
    contextSize,
    slotsPerAdapter: 12,
    summarySlotsPerAdapter: 4,
    nodeMaxConcurrentHops: MAX_CONCURRENT,
    nodeMaxQueuedHops: MAX_QUEUED,
    nodeSummaryLane: SUMMARY_HOPS ?? "none (summaries share the hops above)",
    maxOutputTokens: MAX_OUTPUT_TOKENS,
    hopDeadlineMs: HOP_TIMEOUT_MS ?? "defaults (route 10 s)",
    minTurnsPerLevel: LEVEL_TURNS,
    warmupTurnsPerClient: WARMUP_TURNS_PER_CLIENT,
  },
  raw: {
    sequences: MAX_CONCURRENT,
    decodeTokensPerSequence: RAW_DECODE_TOKENS,
    before: round(rawBefore.decodeTokensPerSecond, 1),
    after: round(rawAfter.decodeTokensPerSecond, 1),
    tokensPerSecond: rawTokensPerSecond,
  },
  levels: levelsWithRaw,
  ...(stoppedAt === undefined ? {} : { stoppedAt }),
};
await writeFile(join(OUT_DIR, "concurrency.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "concurrency.md"), renderConcurrencyReport(report));
process.stdout.write(renderConcurrencyReport(report));
