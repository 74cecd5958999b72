/**
 * `npm run bench:edge`: (1) per-turn edge overhead (client time minus GPU node time) at conversation lengths
 * 10 … 5,000 turns, with an instant engine so only the edge, its Durable Object and NATS are measured; (2) the
 * share of route + summary time on the client's critical path, on the real tiny model. Writes
 * test/bench/results/edge.json and edge.md. A benchmark, not a test: it asserts nothing. `MOL_BENCH_DUMP=<file>`
 * also writes every paced and back-to-back turn's client time and `mol`, to see where a turn's time went.
 */
import { writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { DEFAULT_ADAPTER_IDS, ROUTER_ADAPTER } from "../../schema/wire/v2/index.ts";
import { defaultThreadCount } from "../../gpu-nodes/src/config/node-config.ts";
import {
  DEFAULT_BASE_MODEL,
  findCatalogEntry,
  weightsSha256s,
} from "../../gpu-nodes/tools/models/model-catalog.ts";
import { findTrainedRouter } from "../../gpu-nodes/tools/models/find-trained-router.ts";
import { SMOLLM2_LABEL, findSmollm2Model } from "../harness/find-smollm2-model.ts";
import { ensureTestModels } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { FIXTURE_MODEL_PATH, REPO_ROOT, TEST_MODELS_DIR } from "../harness/paths.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { startTestNode } from "../harness/start-test-node.ts";
import { startInstantNode } from "./start-instant-node.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { renderEdgeReport, type EdgeReport, type HopBreakdown } from "./render-edge-report.ts";
import { mean, percentile, round, sum } from "./stats.ts";
import { reportBenchProgress } from "./report-bench-progress.ts";
import { listAllItems } from "./reconcile-soak.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { parseServerTiming, type StageTimings } from "../../workers/src/lib/stage-timings.ts";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";

const LENGTHS = (process.env.MOL_BENCH_LENGTHS ?? "10,100,1000,5000").split(",").map(Number);
const SAMPLE_TURNS = Number(process.env.MOL_BENCH_SAMPLE_TURNS ?? 20);
/** Turns on a conversation of their own before the measured one starts. */
const WARMUP_TURNS = Number(process.env.MOL_BENCH_WARMUP_TURNS ?? 50);
const CRITICAL_TURNS = Number(process.env.MOL_BENCH_CRITICAL_TURNS ?? 20);
/** Models the hop breakdown runs on: `tiny` always; `smollm2` (with the trained l0) when the model is here. */
const CRITICAL_RUNS = (process.env.MOL_BENCH_CRITICAL_RUNS ?? "tiny,smollm2").split(",");
/** Summary slots per adapter on the tiny node; unset = the engine's default, 0 = summaries on the answer's slot. */
const SUMMARY_SLOTS = process.env.MOL_BENCH_SUMMARY_SLOTS;
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const KEY = "sk-bench";
const ADMIN_TOKEN = "mol-admin-bench";
/** Turns per side in the label-resolution series (no production label against one with a 50 % canary). */
const LABEL_TURNS = Number(process.env.MOL_BENCH_LABEL_TURNS ?? 200);

type Mol = {
  turnId?: string;
  timings: Record<string, number | undefined>;
  usage?: { answer?: { completionTokens: number } };
};
interface Turn {
  clientMs: number;
  mol: Mol;
  /** The edge's `server-timing` stages for this request. */
  stages: StageTimings;
}

type Post = (path: string, body: unknown) => Promise<{ json: unknown; stages: StageTimings }>;

type Get = (path: string) => Promise<unknown>;

async function waitForSummary(get: Get, conversation: string): Promise<void> {
  for (;;) {
    const items = (await get(`/v1/conversations/${conversation}/items?limit=1`)) as {
      data: Array<{ mol?: { summary: { status: string } } }>;
    };
    if (items.data[0]?.mol?.summary.status !== "pending") return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** POST as `key` to the edge at `url`, with the `server-timing` stages of the answer. */
function createPost(url: string, key: string, method = "POST"): Post {
  return async (path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    const json: unknown = await response.json();
    return { json, stages: parseServerTiming(response.headers.get("server-timing")) };
  };
}

async function withEdge<T>(natsWsUrl: string, use: (post: Post, get: Get, url: string) => Promise<T>) {
  const edge = await spawnBenchEdge({
    name: "edge",
    natsWsUrl,
    devApiKey: KEY,
    vars: { MOL_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  const post = createPost(edge.url, KEY);
  const get = async (path: string) => {
    const response = await fetch(`${edge.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
    const json: unknown = await response.json();
    return json;
  };
  try {
    return await use(post, get, edge.url);
  } finally {
    await edge.stop();
  }
}

const TASKS = [
  "set up a home network",
  "plan a vegetable garden",
  "learn to read sheet music",
  "train for a 10 km run",
  "organise a small conference",
  "write a cover letter",
  "bake sourdough bread",
  "choose a used car",
  "start a podcast",
  "keep a budget",
  "repaint a bedroom",
  "prepare for a job interview",
  "teach a child to ride a bike",
  "back up my photos",
  "learn a second language",
];

/**
 * The n-th user message: open-ended questions, every one different, so a real model answers each at length (asked
 * the same question over and over, SmolLM2 fell into a 13-token rut), from one list for paced and back-to-back turns
 * alike (even n paced, odd n back to back; an odd count of tasks, so each side asks every one): the two sides
 * compare at like answer lengths.
 */
function benchQuestion(n: number): string {
  const task = TASKS[n % TASKS.length] as string;
  const round = Math.floor(n / TASKS.length);
  return round === 0
    ? `How do I ${task}? Explain it step by step.`
    : `How do I ${task}, part ${round + 1}? Explain it step by step.`;
}

async function runTurn(post: Post, conversation: string, input: string, extra = {}): Promise<Turn> {
  const started = performance.now();
  const { json, stages } = await post("/v1/responses", { conversation, input, ...extra });
  return { clientMs: performance.now() - started, mol: (json as { mol: Mol }).mol, stages };
}

const answerTokens = (t: Turn) => t.mol.usage?.answer?.completionTokens ?? 0;
const nodeMs = (t: Turn) => (t.mol.timings.routeNodeMs ?? 0) + (t.mol.timings.answerNodeMs ?? 0);
/**
 * A turn's overhead by stage, from the edge's `server-timing` header (workers/src/lib/stage-timings.ts: in
 * workerd the clock advances only at I/O, so a CPU-only stage reads 0 and its time shows in the next I/O stage).
 * Derived rows: `http` is the client's time outside the Worker (wrangler dev's proxy, the HTTP exchange);
 * `worker, other` the Worker's time outside the timed stages (body parsing, validation, middleware); `object
 * call` the Durable Object call outside the object's own stages (the fetch into the object, the part stream back);
 * a hop's `NATS` its edge time minus the node's own.
 */
function splitOverhead(t: Turn): StageTimings {
  const s = t.stages;
  const at = (stage: string) => s[stage] ?? 0;
  const objectStages = Object.keys(s).filter((k) => k.startsWith("object."));
  const { routeNodeMs = 0, answerNodeMs = 0 } = t.mol.timings;
  return {
    http: t.clientMs - at("edge"),
    auth: at("auth"),
    limiter: at("limiter"),
    "worker, other": at("edge") - at("auth") - at("limiter") - at("object") - at("encode") - at("log"),
    "object call": at("object") - objectStages.reduce((total, k) => total + at(k), 0),
    "object: decode request": at("object.decode"),
    "object: start checks": at("object.start"),
    "object: queue": at("object.queue"),
    "object: harness": at("object.harness"),
    "object: views load": at("object.viewsLoad"),
    "object: views": at("object.views"),
    "object: timeline writes": at("object.timeline"),
    "object: turn record": at("object.record"),
    "route hop: NATS": at("object.route") - routeNodeMs,
    "summary wait": at("object.summaryWait"),
    "answer hop: NATS": at("object.answer") - answerNodeMs,
    "JSON encoding": at("encode"),
    "request log line": at("log"),
    "total overhead": t.clientMs - nodeMs(t),
  };
}

/**
 * What `wrangler dev` and the HTTP exchange alone cost: `GET /livez` (no auth, no object, no NATS), client time
 * minus the Worker's own from its `server-timing` header; the floor under every turn's `http` stage.
 */
async function measureHttpFloor(url: string): Promise<{ p50: number; p95: number }> {
  const samples: number[] = [];
  for (let i = 0; i < 40; i++) {
    const started = performance.now();
    const response = await fetch(`${url}/livez`);
    await response.arrayBuffer();
    const clientMs = performance.now() - started;
    samples.push(clientMs - (parseServerTiming(response.headers.get("server-timing")).edge ?? 0));
  }
  return { p50: round(percentile(samples, 50)), p95: round(percentile(samples, 95)) };
}

/** A distribution-free 95 % interval of the median: the order statistics n/2 ∓ 1.96·√n/2. */
function medianInterval(values: readonly number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const half = (1.96 * Math.sqrt(sorted.length)) / 2;
  const at = (rank: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(rank)))] ?? 0;
  return [round(at(sorted.length / 2 - half - 1)), round(at(sorted.length / 2 + half))];
}

const pct = (values: readonly number[]) => ({
  p50: round(percentile(values, 50)),
  p95: round(percentile(values, 95)),
});

/**
 * What resolving the production label adds to a turn, in the same edge and run as the overhead rows: the bench
 * key's tenant gets a `production` label with a 50 % canary (two harness versions, both the default with a
 * different router prompt), a second tenant has no label (its turns run under the built-in default). Turns
 * alternate between the two, on conversations of the same lengths (10 each, up to LABEL_TURNS / 10 turns), so
 * both sides see the same moments of the machine; a few turns each come first and are not counted. The label
 * cache's TTL (2 s) means most labelled turns read it from the isolate's cache and some from D1, as in service.
 */
async function measureLabelResolution(post: Post, url: string) {
  const admin = createPost(url, ADMIN_TOKEN);
  const tenant = (await admin("/v1/admin/tenants", { name: "bench, no label" })).json as { id: string };
  const { key } = (await admin(`/v1/admin/tenants/${tenant.id}/keys`, {})).json as { key: string };
  const unlabelled = createPost(url, key);
  const push = async (tag: string) =>
    (
      (
        await post("/v1/harnesses", {
          document: {
            ...DEFAULT_HARNESS,
            router: {
              ...DEFAULT_HARNESS.router,
              systemPrompt: `${DEFAULT_HARNESS.router.systemPrompt} (${tag})`,
            },
          },
        })
      ).json as { hash: string }
    ).hash;
  const [v1, v2] = [await push("bench v1"), await push("bench v2")];
  await createPost(
    url,
    KEY,
    "PUT",
  )("/v1/harness-labels/production", {
    harness: v1,
    canary: { harness: v2, percent: 50 },
    reason: "bench",
  });
  const sides = { without: unlabelled, with: post } as const;
  const samples = { without: [] as number[], with: [] as number[] };
  const harnessStage = { without: [] as number[], with: [] as number[] };
  const arms = new Set<string>();
  /** Labelled minus unlabelled overhead of each pair of turns sent back to back: slow drift of the box cancels. */
  const differences: number[] = [];
  const conversationsPerSide = 10;
  const turnsPerConversation = Math.max(1, Math.ceil(LABEL_TURNS / conversationsPerSide));
  const open = async (side: Post) =>
    Promise.all(
      Array.from(
        { length: conversationsPerSide },
        async () => ((await side("/v1/conversations", {})).json as { id: string }).id,
      ),
    );
  const conversations = { without: await open(sides.without), with: await open(sides.with) };
  const warmup = { without: (await open(sides.without))[0] ?? "", with: (await open(sides.with))[0] ?? "" };
  for (let i = 0; i < 5; i++) {
    for (const side of ["without", "with"] as const) await runTurn(sides[side], warmup[side], `warm-up ${i}`);
  }
  for (let round = 0; round < turnsPerConversation; round++) {
    for (let c = 0; c < conversationsPerSide; c++) {
      // Which side goes first alternates, so neither always follows the other.
      const order = (round + c) % 2 === 0 ? (["without", "with"] as const) : (["with", "without"] as const);
      const pair = { without: 0, with: 0 };
      for (const side of order) {
        const turn = await runTurn(
          sides[side],
          conversations[side][c] ?? "",
          `turn ${round}: a user message of ordinary length, asking something.`,
        );
        samples[side].push(turn.clientMs - nodeMs(turn));
        pair[side] = turn.clientMs - nodeMs(turn);
        harnessStage[side].push(turn.stages["object.harness"] ?? 0);
        const harness = (turn.mol as { harness?: { hash: string; source: string } }).harness;
        // Each side must really be what it stands for: the label's arms, and the built-in default.
        if (harness?.source !== (side === "with" ? "label" : "default"))
          throw new Error(`a turn ${side} a label ran under ${JSON.stringify(harness)}`);
        if (side === "with") arms.add(harness.hash);
      }
      differences.push(pair.with - pair.without);
      reportBenchProgress(
        "label resolution (turn pairs)",
        samples.with.length,
        turnsPerConversation * conversationsPerSide,
      );
    }
  }
  return {
    turnsPerSide: samples.with.length,
    /** Versions the labelled turns ran under: 2 when both arms of the canary were measured. */
    armsSeen: [v1, v2].filter((hash) => arms.has(hash)).length,
    withoutLabelMs: pct(samples.without),
    withLabelMs: pct(samples.with),
    differenceP50Ms: round(percentile(samples.with, 50) - percentile(samples.without, 50)),
    pairedDifferenceMs: { median: round(percentile(differences, 50)), ci95: medianInterval(differences) },
    harnessStageMs: { without: pct(harnessStage.without), with: pct(harnessStage.with) },
  };
}

// 1. Edge overhead against conversation length, on the instant engine.
const nats = await startNatsServer();
const instantNode = await startInstantNode(nats.url, "bench-instant");
const {
  rows: overhead,
  httpFloor,
  labelResolution,
} = await withEdge(nats.wsUrl, async (post, _get, url) => {
  // A fresh workerd compiles and warms as it goes: those first turns would say nothing about conversation length.
  const warmup = (await post("/v1/conversations", {})).json as { id: string };
  for (let i = 0; i < WARMUP_TURNS; i++) await runTurn(post, warmup.id, `warm-up turn ${i}`);
  const { id } = (await post("/v1/conversations", {})).json as { id: string };
  const rows = [];
  let turns = 0;
  for (const length of LENGTHS) {
    const samples: number[] = [];
    const stages: StageTimings[] = [];
    while (turns < length) {
      const turn = await runTurn(
        post,
        id,
        `turn ${turns}: a user message of ordinary length, asking something.`,
      );
      turns++;
      if (turns > length - SAMPLE_TURNS) {
        samples.push(turn.clientMs - nodeMs(turn));
        stages.push(splitOverhead(turn));
      }
      if (turns % 500 === 0) process.stderr.write(`  ${turns} turns\n`);
      if (turns % 10 === 0) reportBenchProgress("edge overhead (turns)", turns, Math.max(...LENGTHS));
    }
    rows.push({
      turns: length,
      samples: samples.length,
      p50Ms: round(percentile(samples, 50)),
      p95Ms: round(percentile(samples, 95)),
      meanMs: round(sum(samples) / samples.length),
      p99Ms: round(percentile(samples, 99)),
      stagesMs: Object.fromEntries(
        Object.keys(stages[0] ?? {}).map((stage) => {
          const values = stages.map((x) => x[stage] ?? 0);
          return [stage, { p50: round(percentile(values, 50)), p95: round(percentile(values, 95)) }];
        }),
      ),
    });
  }
  return {
    rows,
    httpFloor: await measureHttpFloor(url),
    labelResolution: await measureLabelResolution(post, url),
  };
});
await instantNode.stop();

// 2. Where a turn's time goes, on a real model: routed turns, default sampling, answers capped to 64 tokens.
// A paced client waits for the previous turn's summary before its next message (as a person reading the answer
// would), so the summary never delays a turn; a back-to-back client sends a burst of turns in the same
// conversation. Half the paced turns come before the burst and half after it (once its summaries settled): the
// two are compared at the same conversation lengths, and neither side gets the box's quieter minutes.
async function measureHopBreakdown(natsWsUrl: string) {
  return withEdge(natsWsUrl, async (post, get) => {
    const { id } = (await post("/v1/conversations", {})).json as { id: string };
    const paced: Turn[] = [];
    const backToBack: Turn[] = [];
    const pacedTurns = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        paced.push(await runTurn(post, id, benchQuestion(2 * i), { max_output_tokens: 64 }));
        await waitForSummary(get, id);
        reportBenchProgress("hop breakdown, paced turns", i + 1, CRITICAL_TURNS);
      }
    };
    await pacedTurns(0, Math.floor(CRITICAL_TURNS / 2));
    for (let i = 0; i < CRITICAL_TURNS; i++) {
      backToBack.push(await runTurn(post, id, benchQuestion(2 * i + 1), { max_output_tokens: 64 }));
    }
    // The burst's summaries, deferred while it ran: each must still land (or fail, counted), and how long after.
    const burstEnded = performance.now();
    const readStatuses = async () => {
      const after = (await get(`/v1/conversations/${id}/items?order=desc&limit=${CRITICAL_TURNS * 2}`)) as {
        data: Array<{ role: string; mol?: { summary: { status: string } } }>;
      };
      return after.data
        .filter((i) => i.role === "assistant")
        .slice(0, CRITICAL_TURNS)
        .map((i) => i.mol?.summary.status ?? "none");
    };
    let statuses = await readStatuses();
    while (statuses.includes("pending") && performance.now() - burstEnded < 120_000) {
      await new Promise((r) => setTimeout(r, 50));
      statuses = await readStatuses();
    }
    const burstSummaries = {
      ready: statuses.filter((s) => s === "ready").length,
      failed: statuses.filter((s) => s === "failed").length,
      pending: statuses.filter((s) => s === "pending").length,
      settledAfterMs: round(performance.now() - burstEnded),
    };
    await pacedTurns(Math.floor(CRITICAL_TURNS / 2), CRITICAL_TURNS);
    // The paced turns' records once their summaries landed (a response carries the summary as pending).
    const items = await listAllItems<{ id: string; mol?: Mol }>(get, id);
    const byTurn = new Map(items.flatMap((i) => (i.mol?.turnId ? [[i.mol.turnId, i.mol] as const] : [])));
    const withSummary = (t: Turn) => ({ ...t, mol: byTurn.get(t.mol.turnId ?? "") ?? t.mol });
    return { paced: paced.map(withSummary), backToBack, burstSummaries };
  });
}

type Breakdown = Awaited<ReturnType<typeof measureHopBreakdown>>;

function summarizeHopBreakdown(breakdown: Breakdown, model: string): HopBreakdown {
  const pick = (key: string) => breakdown.paced.map((t) => t.mol.timings[key] ?? 0);
  const route = pick("routeMs");
  const firstToken = pick("answerFirstTokenMs");
  const answer = pick("answerTotalMs");
  const summary = pick("summaryMs");
  const client = breakdown.paced.map((t) => t.clientMs);
  const backToBack = breakdown.backToBack.map((t) => t.clientMs);
  const backToBackFirstToken = breakdown.backToBack.map((t) => t.mol.timings.answerFirstTokenMs ?? 0);
  const backToBackBusy = breakdown.backToBack.map(
    (t) => (t.mol.timings.routeMs ?? 0) + (t.mol.timings.answerTotalMs ?? 0),
  );
  return {
    model,
    turns: breakdown.paced.length,
    routeMs: { p50: round(percentile(route, 50)), p95: round(percentile(route, 95)) },
    answerFirstTokenMs: { p50: round(percentile(firstToken, 50)), p95: round(percentile(firstToken, 95)) },
    answerTotalMs: { p50: round(percentile(answer, 50)), p95: round(percentile(answer, 95)) },
    summaryMs: { p50: round(percentile(summary, 50)), p95: round(percentile(summary, 95)) },
    clientTurnMs: { p50: round(percentile(client, 50)), p95: round(percentile(client, 95)) },
    // The response ends with the answer; the summary runs after it, so only the route hop is on the critical path.
    criticalShareOfRouteAndSummary: round(sum(route) / sum(client), 3),
    shareIfSummaryWereInline: round((sum(route) + sum(summary)) / (sum(client) + sum(summary)), 3),
    backToBackClientTurnMs: {
      p50: round(percentile(backToBack, 50)),
      p95: round(percentile(backToBack, 95)),
    },
    // A summary holding the answer's KV slot shows here first: the answer cannot start before it ends.
    backToBackAnswerFirstTokenMs: {
      p50: round(percentile(backToBackFirstToken, 50)),
      p95: round(percentile(backToBackFirstToken, 95)),
    },
    // Client time outside the answer hop (route, any summary wait, and the edge's own overhead), as before.
    backToBackOverPacedP50: round(percentile(backToBack, 50) / percentile(client, 50), 3),
    backToBackOverPacedMean: round(mean(backToBack) / mean(client), 3),
    // Turn times compare only at like answer lengths (a real model's vary with the message and the sampling).
    answerTokensMean: {
      paced: round(mean(breakdown.paced.map(answerTokens)), 1),
      backToBack: round(mean(breakdown.backToBack.map(answerTokens)), 1),
    },
    backToBackSummaries: breakdown.burstSummaries,
    // Route plus the summary wait the edge recorded (a turn routed to another specialist waits for the previous
    // summary), plus what back-to-back turns took beyond paced ones (a summary still busy on the answer's KV slot).
    backToBackShareOfRouteAndSummaryWait: round(
      (sum(
        breakdown.backToBack.map((t) => (t.mol.timings.routeMs ?? 0) + (t.mol.timings.summaryWaitMs ?? 0)),
      ) +
        Math.max(0, sum(backToBack) - percentile(client, 50) * backToBack.length)) /
        sum(backToBack),
      3,
    ),
    backToBackShareOfRouteAndSummary: round(
      (sum(backToBack) -
        sum(backToBackBusy) +
        sum(breakdown.backToBack.map((t) => t.mol.timings.routeMs ?? 0))) /
        sum(backToBack),
      3,
    ),
  };
}

const dumps: Record<string, Breakdown> = {};
const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
const tiny = await startTestNode({
  natsUrl: nats.url,
  models,
  nodeId: "bench-tiny",
  engine: {
    contextSize: 4096,
    slotsPerAdapter: 4,
    ...(SUMMARY_SLOTS === undefined ? {} : { summarySlotsPerAdapter: Number(SUMMARY_SLOTS) }),
  },
});
dumps.tiny = await measureHopBreakdown(nats.wsUrl);
await tiny.stop();
const hops = summarizeHopBreakdown(dumps.tiny, "the generated tiny llama (random weights)");

// The same on SmolLM2 with the trained l0 (the specialists on the bare base): there the answer, not the route, is
// most of a turn, as on the report's model.
const smollm2Path = CRITICAL_RUNS.includes("smollm2") ? findSmollm2Model() : undefined;
const servedEntry = findCatalogEntry(DEFAULT_BASE_MODEL);
const trainedRouter = servedEntry && findTrainedRouter(weightsSha256s(servedEntry));
let hopsSmollm2: HopBreakdown | undefined;
if (smollm2Path && trainedRouter) {
  const smol = await startTestNode({
    natsUrl: nats.url,
    models: { base: smollm2Path, adapters: {} },
    nodeId: "bench-smollm2",
    engine: {
      adapters: [
        { id: ROUTER_ADAPTER, loraPath: trainedRouter.path },
        ...DEFAULT_ADAPTER_IDS.filter((id) => id !== ROUTER_ADAPTER).map((id) => ({ id })),
      ],
      threads: defaultThreadCount(availableParallelism()),
      contextSize: 4096,
      slotsPerAdapter: 2,
    },
  });
  dumps.smollm2 = await measureHopBreakdown(nats.wsUrl);
  await smol.stop();
  hopsSmollm2 = summarizeHopBreakdown(dumps.smollm2, `${SMOLLM2_LABEL}, trained l0`);
}
await nats.dispose();
if (process.env.MOL_BENCH_DUMP) await writeFile(process.env.MOL_BENCH_DUMP, JSON.stringify(dumps, null, 1));

const report: EdgeReport = {
  command: describeBenchCommand("bench:edge", [
    "MOL_BENCH_LENGTHS",
    "MOL_BENCH_SAMPLE_TURNS",
    "MOL_BENCH_WARMUP_TURNS",
    "MOL_BENCH_CRITICAL_TURNS",
    "MOL_BENCH_SUMMARY_SLOTS",
    "MOL_BENCH_CRITICAL_RUNS",
    "MOL_BENCH_LABEL_TURNS",
  ]),
  machine: collectMachineFacts(),
  overhead,
  httpFloorMs: httpFloor,
  labelResolution,
  hops,
  ...(hopsSmollm2 ? { hopsSmollm2 } : {}),
};

await writeFile(join(OUT_DIR, "edge.json"), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(OUT_DIR, "edge.md"), renderEdgeReport(report));
process.stdout.write(renderEdgeReport(report));
