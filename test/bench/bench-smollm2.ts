/**
 * `npm run bench:smollm2`: the GPU node on SmolLM2-135M-Instruct over a real nats-server (speed per adapter,
 * route hop, answer time to first token, KV reuse, memory), then, in the same run, the physical limit: node-llama-cpp
 * alone generating on one sequence of the same model with the same threads. Writes test/bench/results/smollm2.json
 * and smollm2.md; without the model file both say so and the run succeeds. A benchmark: it asserts nothing.
 */
import { writeFile } from "node:fs/promises";
import { statSync } from "node:fs";
import { join } from "node:path";
import { availableParallelism } from "node:os";
import { defaultThreadCount } from "../../gpu-nodes/src/config/node-config.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";
import { answerInput } from "../harness/generate-requests.ts";
import { SMOLLM2_LABEL, findSmollm2Model, smollm2Candidates } from "../harness/find-smollm2-model.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { startTestNode } from "../harness/start-test-node.ts";
import { collectTimedAnswer } from "./collect-timed-answer.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { measureKvBytesPerSlot } from "./measure-kv-bytes.ts";
import { measureKvReuse, type KvReuseRow } from "./measure-kv-reuse.ts";
import { openRawDecoder, type RawDecodeRun } from "./measure-raw-decode.ts";
import { renderAppendOnlyView } from "./render-naive-view.ts";
import { renderSmollm2Report, type Smollm2Measured, type Smollm2Report } from "./render-smollm2-report.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { measureRouteLatency } from "./measure-route-latency.ts";
import { percentile, round } from "./stats.ts";

const THREADS = Number(process.env.MOL_BENCH_THREADS ?? defaultThreadCount(availableParallelism()));
const TURNS = Number(process.env.MOL_BENCH_TURNS ?? 30);
const ROUTES = Number(process.env.MOL_BENCH_ROUTES ?? 200);
const DECODE_TOKENS = Number(process.env.MOL_BENCH_DECODE_TOKENS ?? 128);
/** Lines of filler before the question: what the cold prefill measures (12 ≈ 170 prompt tokens). */
const PREFILL_LINES = Number(process.env.MOL_BENCH_PREFILL_LINES ?? 12);
const CONTEXT_SIZE = 2048;
// Three conversations per adapter at most (speed, greedy reuse, sampled reuse): none starts on another's slot.
const SLOTS = 3;
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const KNOBS = [
  "MOL_BENCH_MODEL",
  "MOL_BENCH_THREADS",
  "MOL_BENCH_TURNS",
  "MOL_BENCH_ROUTES",
  "MOL_BENCH_DECODE_TOKENS",
  "MOL_BENCH_PREFILL_LINES",
];

/** A prompt SmolLM2 keeps answering at length under greedy decoding, so every run decodes the full count. */
const SPEED_PROMPT =
  "system: you are a helpful assistant.\n" +
  "user: some context to prefill before the question. ".repeat(PREFILL_LINES) +
  "\nuser: count from 1 to 500, one number per line.\nassistant: 1\n2\n3\n";

async function main(): Promise<Smollm2Report> {
  const command = describeBenchCommand("bench:smollm2", KNOBS);
  const modelPath = findSmollm2Model();
  if (!modelPath) {
    return {
      command,
      machine: collectMachineFacts(),
      skipped: `no SmolLM2-135M-Instruct GGUF at ${smollm2Candidates().join(", ")} (run \`npm run molmesh -- models pull\` or set MOL_BENCH_MODEL)`,
    };
  }
  const rss = () => process.memoryUsage().rss;
  const rssBefore = rss();
  const nats = await startNatsServer();
  const t = await startTestNode({
    natsUrl: nats.url,
    models: { base: modelPath, adapters: {} },
    // No SmolLM2 LoRA exists yet: every adapter runs on the bare base, in its own context as a LoRA would.
    engine: {
      threads: THREADS,
      contextSize: CONTEXT_SIZE,
      slotsPerAdapter: SLOTS,
      adapters: DEFAULT_ADAPTER_IDS.map((id) => ({ id })),
    },
    node: { maxConcurrent: 16 },
  });
  const rssLoaded = rss();
  const rawDecoder = await openRawDecoder({ modelPath, threads: THREADS, contextSize: CONTEXT_SIZE });

  // 1. Prefill and decode per adapter, on a fresh slot, measured by the requester (over NATS) and by the engine;
  // each right after by the physical limit, node-llama-cpp alone on one sequence generating as many tokens, so
  // both halves of a pair see the same load on a shared machine (the node is idle meanwhile).
  const speed: Smollm2Measured["speed"] = [];
  const raw: RawDecodeRun[] = [];
  for (const adapter of DEFAULT_ADAPTER_IDS) {
    const answer = await collectTimedAnswer(
      t.client,
      answerInput(`speed-${adapter}`, adapter, SPEED_PROMPT, {
        sampling: { maxTokens: DECODE_TOKENS, temperature: 0 },
      }),
    );
    const { usage, timings } = answer.finish;
    speed.push({
      adapter,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      prefillTokensPerSecond: round(usage.evaluatedPromptTokens / (timings.prefillMs / 1000), 1),
      decodeTokensPerSecond: round((usage.completionTokens - 1) / (answer.streamMs / 1000), 1),
      engineDecodeTokensPerSecond: round((usage.completionTokens - 1) / (timings.decodeMs / 1000), 1),
      firstTokenMs: round(answer.firstDeltaMs),
    });
    raw.push(await rawDecoder.run(SPEED_PROMPT, usage.completionTokens));
    reportBenchProgress("speed", speed.length, DEFAULT_ADAPTER_IDS.length);
  }

  // 2. Route hop latency, requester side (NATS round trip included).
  const routeMs = await measureRouteLatency(t.client, ROUTES, SLOTS);

  // 3. KV reuse over a growing append-only conversation per adapter; each turn's time to first token, warm.
  const reuse: KvReuseRow[] = [];
  const warmFirstTokenMs: number[] = [];
  for (const adapter of DEFAULT_ADAPTER_IDS) {
    reuse.push(
      await measureKvReuse({
        client: t.client,
        adapter,
        turns: TURNS,
        conversationId: `reuse-${adapter}`,
        renderView: (history, user) => renderAppendOnlyView(adapter, history, user),
        onTurn: (answer) => {
          warmFirstTokenMs.push(answer.firstDeltaMs);
          reportBenchProgress("KV reuse", warmFirstTokenMs.length, TURNS * DEFAULT_ADAPTER_IDS.length);
        },
      }),
    );
  }
  // The same conversation once more with sampled answers, which stray from the tokenizer's own split more often.
  const sampledReuse = await measureKvReuse({
    client: t.client,
    adapter: "chat",
    turns: TURNS,
    conversationId: "reuse-sampled-chat",
    renderView: (history, user) => renderAppendOnlyView("chat", history, user),
    sampling: { temperature: 0.8, seed: 7 },
  });
  const rssAfter = rss();
  await rawDecoder.close();
  await t.stop();
  await nats.dispose();

  const median = (values: readonly number[]) => percentile(values, 50);
  const shares = speed.map(
    (s, i) => s.decodeTokensPerSecond / (raw[i] as RawDecodeRun).decodeTokensPerSecond,
  );
  const total = (pick: (row: KvReuseRow) => number) => reuse.reduce((sum, row) => sum + pick(row), 0);
  return {
    command,
    machine: collectMachineFacts(),
    settings: {
      model: SMOLLM2_LABEL,
      adapters: "bare base (no SmolLM2 LoRA yet)",
      threads: THREADS,
      contextSize: CONTEXT_SIZE,
      slots: SLOTS,
      decodeTokens: DECODE_TOKENS,
    },
    speed,
    raw: {
      runs: raw.map((r, i) => ({
        after: (speed[i] as Smollm2Measured["speed"][number]).adapter,
        ...r,
        prefillTokensPerSecond: round(r.prefillTokensPerSecond, 1),
        decodeTokensPerSecond: round(r.decodeTokensPerSecond, 1),
        nodeShareOfRaw: round(shares[i] as number, 3),
      })),
      decodeTokensPerSecond: round(median(raw.map((r) => r.decodeTokensPerSecond)), 1),
      nodeDecodeTokensPerSecond: round(median(speed.map((s) => s.decodeTokensPerSecond)), 1),
      nodeShareOfRaw: round(median(shares), 3),
    },
    route: {
      samples: routeMs.length,
      p50Ms: round(percentile(routeMs, 50)),
      p95Ms: round(percentile(routeMs, 95)),
    },
    firstToken: {
      samples: warmFirstTokenMs.length,
      warmP50Ms: round(percentile(warmFirstTokenMs, 50)),
      warmP95Ms: round(percentile(warmFirstTokenMs, 95)),
    },
    reuse,
    sampledReuse,
    reuseShareOfIdeal: round(total((r) => r.cachedPromptTokens) / total((r) => r.idealCachedTokens), 4),
    memory: {
      baseFileBytes: statSync(modelPath).size,
      kvBytesPerSlot: await measureKvBytesPerSlot(modelPath, CONTEXT_SIZE),
      slotsPerAdapter: SLOTS,
      contexts: DEFAULT_ADAPTER_IDS.length,
      rssBeforeLoadBytes: rssBefore,
      rssAfterLoadBytes: rssLoaded,
      rssAfterRunBytes: rssAfter,
    },
  };
}

const report = await main();
await writeFile(join(OUT_DIR, "smollm2.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "smollm2.md"), renderSmollm2Report(report));
process.stdout.write(renderSmollm2Report(report));
