/**
 * `npm run bench:fleet`: N GPU node processes, M conversations of T routed turns, with the edge's placement
 * (warm cache weighed against queues) versus a plain NATS queue group (random node), both in the same run.
 * Reports the cached / prompt token ratio against the ideal (every previous view of the same (conversation,
 * adapter) reused), p50/p95 time to first token, and the max/min hops per node. Two runs: the generated tiny
 * model on short turns, then SmolLM2-135M-Instruct on conversations that grow to about 2,000 tokens (skipped
 * without the model). Writes test/bench/results/fleet.json and fleet.md. A benchmark, not a test.
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
import { SMOLLM2_LABEL, findSmollm2Model } from "../harness/find-smollm2-model.ts";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";

const NODES = Number(process.env.MOL_BENCH_NODES ?? 4);
const CONVERSATIONS = Number(process.env.MOL_BENCH_CONVERSATIONS ?? 64);
const TURNS = Number(process.env.MOL_BENCH_TURNS ?? 4);
const CONCURRENCY = Number(process.env.MOL_BENCH_CONCURRENCY ?? 8);
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const KEY = "sk-bench-fleet";
/** Which runs: `tiny` (generated model, short turns) and `smollm2` (long conversations). */
const RUNS = (process.env.MOL_BENCH_FLEET_RUNS ?? "tiny,smollm2").split(",").map((r) => r.trim());
const SMOL_NODES = Number(process.env.MOL_BENCH_SMOL_NODES ?? 3);
const SMOL_CONVERSATIONS = Number(process.env.MOL_BENCH_SMOL_CONVERSATIONS ?? 6);
const SMOL_TURNS = Number(process.env.MOL_BENCH_SMOL_TURNS ?? 4);
const SMOL_CONCURRENCY = Number(process.env.MOL_BENCH_SMOL_CONCURRENCY ?? 3);
/** Bytes of each SmolLM2 user message: under a quarter of the view budget (the limit), ~500 tokens. */
const SMOL_MESSAGE_BYTES = Number(process.env.MOL_BENCH_SMOL_MESSAGE_BYTES ?? 2_000);
/**
 * Four such messages in one view, uncompacted. Views are budgeted in bytes at one byte per token (a bound, not
 * English's ~4), and keep 37.5 % of the context free for the turn's answer: 2,000-byte messages need ~14,500
 * tokens of context. At 10,240 or 12,288 the fourth turn's view was compacted, so no node held its prefix and the
 * turn the placement target is about had no cache to win (the report counts such answers).
 */
const SMOL_CONTEXT = Number(process.env.MOL_BENCH_SMOL_CONTEXT ?? 16_384);
/**
 * `mol:<label>` pins every SmolLM2 turn to one specialist: a specialist's view shows its own turns whole and the
 * others' as summaries, so only a pinned conversation grows its view to all four messages (no route hop then).
 */
const SMOL_MODEL = process.env.MOL_BENCH_SMOL_MODEL;

const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
const modelEnv = {
  MOL_BASE_MODEL: models.base,
  ...Object.fromEntries(Object.entries(models.adapters).map(([id, path]) => [adapterEnvName(id), path])),
};

interface FleetRun {
  name: string;
  nodes: number;
  conversations: number;
  turns: number;
  concurrency: number;
  nodeEnv: Record<string, string>;
  edgeVars?: Record<string, string>;
  inputFor?: (conversation: number, turn: number) => string;
  maxOutputTokens?: number;
  model?: string | undefined;
}

async function runMode(run: FleetRun, mode: "affinity" | "queue-group"): Promise<FleetModeResult> {
  const nats = await startNatsServer();
  const nodes = Array.from({ length: run.nodes }, (_, i) =>
    spawnBenchNode(`node-${i + 1}`, nats.url, run.nodeEnv),
  );
  await Promise.all(nodes.map((n) => n.ready));
  const edge = await spawnBenchEdge({
    name: "fleet",
    natsWsUrl: nats.wsUrl,
    devApiKey: KEY,
    vars: { ...run.edgeVars, MOL_PLACEMENT: mode },
  });
  try {
    process.stderr.write(
      `${run.name} ${mode}: ${run.conversations} conversations × ${run.turns} turns on ${run.nodes} nodes…\n`,
    );
    const hops = await measureFleetRun({
      baseUrl: edge.url,
      apiKey: KEY,
      conversations: run.conversations,
      turns: run.turns,
      concurrency: run.concurrency,
      ...(run.inputFor ? { inputFor: run.inputFor } : {}),
      ...(run.maxOutputTokens ? { maxOutputTokens: run.maxOutputTokens } : {}),
      ...(run.model ? { model: run.model } : {}),
      onConversationDone: (done) =>
        reportBenchProgress(`${run.name} ${mode} (conversations)`, done, run.conversations),
    });
    // MOL_BENCH_DUMP=<prefix>: every hop of the run, to see where each went and what it reused.
    if (process.env.MOL_BENCH_DUMP)
      await writeFile(
        `${process.env.MOL_BENCH_DUMP}.${run.name}-${mode}.json`,
        JSON.stringify(hops, null, 1),
      );
    return summarize(mode, hops, run.turns);
  } finally {
    await edge.stop();
    await Promise.all(nodes.map((n) => n.stop()));
    await nats.dispose();
  }
}

function summarize(mode: FleetModeResult["mode"], hops: HopSample[], turns: number): FleetModeResult {
  const perNode = new Map<string, number>();
  for (const hop of hops) perNode.set(hop.nodeId, (perNode.get(hop.nodeId) ?? 0) + 1);
  const loads = [...perNode.values()];
  const answers = hops.filter((h) => h.hop === "answer");
  const ttft = answers.map((h) => h.ttftMs ?? 0);
  const lastTurn = answers.filter((h) => h.turn === turns - 1);
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
    lastTurnTtftP50Ms: round(
      percentile(
        lastTurn.map((h) => h.ttftMs ?? 0),
        50,
      ),
    ),
    lastTurnPromptTokensP50: round(
      percentile(
        lastTurn.map((h) => h.promptTokens),
        50,
      ),
    ),
    hopsPerNode: Object.fromEntries([...perNode.entries()].sort()),
    maxMinLoad: round(Math.max(...loads) / Math.min(...loads), 2),
    compacted: { answers: countCompacted(answers), of: answers.length },
  };
}

/** Answers whose prompt shrank since the conversation's previous answer: its view was compacted in between. */
function countCompacted(answers: readonly HopSample[]): number {
  const previous = new Map<string, number>();
  let compacted = 0;
  for (const hop of [...answers].sort((a, b) => a.turn - b.turn)) {
    const before = previous.get(hop.conversation);
    if (before !== undefined && hop.promptTokens < before) compacted++;
    previous.set(hop.conversation, hop.promptTokens);
  }
  return compacted;
}

const tinyRun: FleetRun = {
  name: "tiny",
  nodes: NODES,
  conversations: CONVERSATIONS,
  turns: TURNS,
  concurrency: CONCURRENCY,
  nodeEnv: modelEnv,
};

/** A made-up project log: varied English, ~4 bytes a token, different in every conversation and turn. */
function longMessage(conversation: number, turn: number): string {
  const teams = ["billing", "search", "mobile", "payments", "support", "design", "platform", "data"];
  const things = ["release plan", "incident report", "budget sheet", "roadmap", "test results", "survey"];
  const notes = [
    "the numbers moved less than expected",
    "two customers asked for a faster export",
    "the old dashboard still confuses new staff",
    "nobody owns the weekly cleanup yet",
    "the vendor promised a fix by Friday",
    "latency doubled during the evening peak",
  ];
  const lines = [`Part ${turn + 1} of my notes for project ${conversation}; please keep them in mind.`];
  for (let i = 0; lines.join("\n").length < SMOL_MESSAGE_BYTES - 120; i++) {
    const k = conversation * 7 + turn * 13 + i;
    lines.push(
      `In week ${k % 52}, the ${teams[k % teams.length]} team reviewed the ${things[(k >> 1) % things.length]} and noted that ${notes[(k >> 2) % notes.length]}.`,
    );
  }
  return `${lines.join("\n")}\nWhat should I look at first?`;
}

function smollm2Run(modelPath: string): FleetRun {
  const patient = { answerTimeoutMs: 600_000, summary: { timeoutMs: 600_000, maxTokens: 1 } };
  return {
    name: "smollm2",
    nodes: SMOL_NODES,
    conversations: SMOL_CONVERSATIONS,
    turns: SMOL_TURNS,
    concurrency: SMOL_CONCURRENCY,
    // Bare base for every adapter (no SmolLM2 LoRA yet), each in its own context as a LoRA would be. Summaries
    // run on the conversation's own slot (no summary slots): half the KV, and the summary reuses the answer's.
    nodeEnv: {
      MOL_BASE_MODEL: modelPath,
      MOL_ADAPTERS: DEFAULT_ADAPTER_IDS.join(","),
      MOL_CONTEXT_SIZE: String(SMOL_CONTEXT),
      MOL_SLOTS_PER_ADAPTER: "2",
      MOL_SUMMARY_SLOTS_PER_ADAPTER: "0",
    },
    // Cold prefills of ~2,000 tokens take a minute on a loaded 2-core box: no hop may time out meanwhile.
    edgeVars: {
      MOL_HOP_FIRST_PART_TIMEOUT_MS: "600000",
      MOL_HOP_REPLY_TIMEOUT_MS: "600000",
      MOL_HARNESS: JSON.stringify({
        router: { timeoutMs: 600_000 },
        specialists: Object.fromEntries(
          ["chat", "agent", "coding", "genui"].map((label) => [label, patient]),
        ),
      }),
    },
    inputFor: longMessage,
    maxOutputTokens: 8,
    model: SMOL_MODEL,
  };
}

const smollm2Path = findSmollm2Model();
const smollm2 = RUNS.includes("smollm2") && smollm2Path ? smollm2Run(smollm2Path) : undefined;
// The long run first: it is the one the placement targets are about. The report is written after each run,
// so a later run's failure does not lose an earlier one's figures.
const smollm2Results = smollm2
  ? [await runMode(smollm2, "affinity"), await runMode(smollm2, "queue-group")]
  : undefined;
await writeReport([]);
const results = RUNS.includes("tiny")
  ? [await runMode(tinyRun, "affinity"), await runMode(tinyRun, "queue-group")]
  : [];
process.stdout.write(await writeReport(results));

async function writeReport(results: FleetModeResult[]): Promise<string> {
  const report = {
    command: describeBenchCommand("bench:fleet", [
      "MOL_BENCH_NODES",
      "MOL_BENCH_CONVERSATIONS",
      "MOL_BENCH_TURNS",
      "MOL_BENCH_CONCURRENCY",
      "MOL_BENCH_FLEET_RUNS",
      "MOL_BENCH_SMOL_NODES",
      "MOL_BENCH_SMOL_CONVERSATIONS",
      "MOL_BENCH_SMOL_TURNS",
      "MOL_BENCH_SMOL_CONCURRENCY",
      "MOL_BENCH_SMOL_MESSAGE_BYTES",
      "MOL_BENCH_SMOL_MODEL",
      "MOL_BENCH_SMOL_CONTEXT",
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
    ...(smollm2 && smollm2Results
      ? {
          smollm2: {
            settings: {
              nodes: smollm2.nodes,
              conversations: smollm2.conversations,
              turns: smollm2.turns,
              concurrency: smollm2.concurrency,
              messageBytes: SMOL_MESSAGE_BYTES,
              contextSize: SMOL_CONTEXT,
              slotsPerAdapter: 2,
              maxOutputTokens: 8,
              requestModel: SMOL_MODEL ?? "mol (routed)",
              model: `${SMOLLM2_LABEL}, bare base for every adapter`,
            },
            results: smollm2Results,
          },
        }
      : {}),
  };
  const markdown = renderFleetReport(report);
  await writeFile(join(OUT_DIR, "fleet.json"), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(OUT_DIR, "fleet.md"), markdown);
  return markdown;
}
