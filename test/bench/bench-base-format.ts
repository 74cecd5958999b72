/**
 * `npm run bench:base-format`: why the served SmolLM2 is the Q8_0 re-encoding of the packaged Q4_1. Both files
 * through node-llama-cpp alone, same threads, same tokens: a route-sized prefill (26 tokens after 53 held), a
 * long prefill (200 tokens), decode, and how far the Q8_0's next-token distributions are from the Q4_1's on a
 * fixed ChatML exchange (mean KL, top-1 agreement, perplexity of the text). Writes
 * test/bench/results/base-format.{json,md}. A benchmark: it asserts nothing.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { getLlama, LlamaLogLevel, type Llama, type Token } from "node-llama-cpp";
import { DEFAULT_BASE_MODEL } from "../../gpu-nodes/tools/models/model-catalog.ts";
import { compareNextTokenDistributions } from "../harness/compare-next-token-distributions.ts";
import { findSmollm2Model, findSmollm2SourceModel } from "../harness/find-smollm2-model.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { round } from "./stats.ts";

const REPEATS = Number(process.env.MOL_BENCH_REPEATS ?? 9);
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const FILLER = "The quick brown fox jumps over the lazy dog. Write a python function that sorts a list. ";
const EXCHANGE =
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nCan you explain what a hash " +
  "table is, and when I should use one instead of a sorted array?<|im_end|>\n<|im_start|>assistant\nA hash table " +
  "stores key-value pairs and uses a hash function to compute an index into an array of buckets. Lookups, " +
  "insertions and deletions take constant time on average. A sorted array keeps its elements in order, so you " +
  "can binary search it in logarithmic time and iterate over ranges cheaply.<|im_end|>\n";

interface FormatSpeed {
  format: string;
  threads: number;
  routePrefillMs: number;
  longPrefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function measureSpeed(
  llama: Llama,
  path: string,
  format: string,
  threads: number,
): Promise<FormatSpeed> {
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize: 1024, threads, batchSize: 512 });
  const sequence = context.getSequence();
  const tokens = model.tokenize(FILLER.repeat(20)).slice(0, 300);
  const timePrefill = async (held: number, count: number) => {
    const runs: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      await sequence.clearHistory();
      if (held > 0) await sequence.controlledEvaluate(tokens.slice(0, held));
      const part = tokens.slice(held, held + count);
      const started = performance.now();
      await sequence.controlledEvaluate(
        part.map((t, i) => (i === part.length - 1 ? [t, { generateNext: { token: true } }] : t)),
      );
      runs.push(performance.now() - started);
    }
    return median(runs);
  };
  const routePrefillMs = await timePrefill(53, 26);
  const longPrefillMs = await timePrefill(0, 200);
  const decodeRuns: number[] = [];
  for (let r = 0; r < Math.max(3, Math.floor(REPEATS / 3)); r++) {
    await sequence.clearHistory();
    await sequence.controlledEvaluate(tokens.slice(0, 100));
    let next = tokens[100] as Token;
    const started = performance.now();
    for (let i = 0; i < 32; i++) {
      const [out] = await sequence.controlledEvaluate([[next, { generateNext: { token: true } }]]);
      next = out?.next.token ?? next;
    }
    decodeRuns.push((32 / (performance.now() - started)) * 1000);
  }
  await context.dispose();
  await model.dispose();
  return {
    format,
    threads,
    routePrefillMs: round(routePrefillMs, 1),
    longPrefillTokensPerSecond: round((200 / longPrefillMs) * 1000, 0),
    decodeTokensPerSecond: round(median(decodeRuns), 1),
  };
}

const q8Path = findSmollm2Model();
const q4Path = findSmollm2SourceModel();
if (q8Path === undefined || q4Path === undefined) {
  throw new Error(
    `need SmolLM2's Q4_1 and Q8_0: run \`npm run molmesh -- models pull ${DEFAULT_BASE_MODEL}\``,
  );
}

const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const speeds: FormatSpeed[] = [];
for (const threads of [1, 2]) {
  for (const [format, path] of [
    ["Q4_1", q4Path],
    ["Q8_0", q8Path],
  ] as const) {
    speeds.push(await measureSpeed(llama, path, format, threads));
    console.log(JSON.stringify(speeds.at(-1)));
  }
}
const compared = await compareNextTokenDistributions(llama, q4Path, q8Path, EXCHANGE);
await llama.dispose();
const positions = compared.positions;
const fidelity = {
  positions,
  meanKlNats: round(compared.meanKlNats, 4),
  top1Agreement: round(compared.top1Agreement, 3),
  perplexityQ4_1: round(compared.perplexityReference, 2),
  perplexityQ8_0: round(compared.perplexityCandidate, 2),
};
const report = {
  command: describeBenchCommand("bench:base-format", [
    "MOL_BENCH_REPEATS",
    "MOL_MODELS_DIR",
    "MOL_BENCH_MODEL",
  ]),
  machine: collectMachineFacts(),
  files: { q4_1: q4Path, q8_0: q8Path },
  speeds,
  fidelity,
};

const row = (threads: number, pick: (s: FormatSpeed) => number, better: "lower" | "higher") => {
  const q4 = speeds.find((s) => s.format === "Q4_1" && s.threads === threads);
  const q8 = speeds.find((s) => s.format === "Q8_0" && s.threads === threads);
  if (!q4 || !q8) return "– | – | –";
  const ratio = better === "lower" ? pick(q4) / pick(q8) : pick(q8) / pick(q4);
  return `${pick(q4)} | ${pick(q8)} | ${ratio.toFixed(2)}×`;
};
const markdown = [
  "# The served base's format: Q8_0 re-encoded from the packaged Q4_1",
  "",
  `Command: \`${report.command}\`. node-llama-cpp alone, CPU, the median of ${REPEATS} runs.`,
  "",
  "| figure | threads | Q4_1 (packaged) | Q8_0 (served) | Q8_0 speed-up |",
  "| --- | ---: | ---: | ---: | ---: |",
  ...[1, 2].flatMap((t) => [
    `| route-sized prefill, 26 tokens after 53 (ms) | ${t} | ${row(t, (s) => s.routePrefillMs, "lower")} |`,
    `| 200-token prefill (tokens/s) | ${t} | ${row(t, (s) => s.longPrefillTokensPerSecond, "higher")} |`,
    `| decode (tokens/s) | ${t} | ${row(t, (s) => s.decodeTokensPerSecond, "higher")} |`,
  ]),
  "",
  `Fidelity over ${positions} positions of a ChatML exchange: mean KL(Q4_1 ‖ Q8_0) ${fidelity.meanKlNats} nats, ` +
    `the same top token at ${(fidelity.top1Agreement * 100).toFixed(1)} % of positions, perplexity of the text ` +
    `${fidelity.perplexityQ4_1} (Q4_1) and ${fidelity.perplexityQ8_0} (Q8_0).`,
  "",
].join("\n");
await writeFile(join(OUT_DIR, "base-format.json"), JSON.stringify(report, null, 2) + "\n");
await writeFile(join(OUT_DIR, "base-format.md"), markdown);
console.log(markdown);
