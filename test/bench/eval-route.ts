/**
 * `npm run eval:route`: the router on the corpus's dev/test splits and the out-of-corpus set, through the real
 * route hop (a GPU node on a real nats-server, views built by the edge's own code), for four routers: a keyword
 * baseline, zero-shot l0 (the bare base with the router prompt), few-shot l0 (exemplars in the router's system
 * prompt) and the trained l0 adapter. Writes JSON, Markdown and an SVG into test/bench/results.
 * Sets: dev, test, ood, and steady: test's multi-turn examples routed as turn N of a conversation whose earlier
 * turns were routed first in the same KV slot, so the hop prefills only what turn N adds (the cold sets share
 * only the router's system line with the slot). Each row is reported against its physical limit: node-llama-cpp
 * alone prefilling as many tokens (p50) after as many reused ones, same model and threads, measured in the run.
 * Options: --sets dev,test,ood,steady  --routers keyword,zero-shot,few-shot,trained  --limit N
 *   --threads N: llama.cpp threads of the node and of the limit; default the node's (MOL_THREADS' default)
 *   --route-threads N: threads of a route hop on the trained l0 running alone (MOL_ROUTE_THREADS' default), and
 *   of that row's limit; the bare-base routers share the base's context and run on --threads
 *   --family served|plain|chatml|llama3|llama2: the chat format the views are rendered in; default served, the one
 *   the node's heartbeat gives the edge (ChatML for SmolLM2); the adapter's manifest names the views it was trained on.
 *   --smoke: the first 16 test examples, keyword and trained, written to the temp dir unless --out says otherwise
 *   (CI speed; test/routing/eval-route-smoke.test.ts runs it)
 * Env: MOL_ROUTER_BASE (base GGUF; default the models cache's SmolLM2), MOL_ROUTER_ADAPTER (default the committed one).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { connect } from "@nats-io/transport-node";
import { defaultRouteThreadCount, defaultThreadCount } from "../../gpu-nodes/src/config/node-config.ts";
import { createLlamaEngine } from "../../gpu-nodes/src/engine/llama/create-llama-engine.ts";
import { fingerprintFile } from "../../gpu-nodes/src/runtime/fingerprint-file.ts";
import { startGpuNode } from "../../gpu-nodes/src/service/start-gpu-node.ts";
import { loadCorpus, type CorpusRecord } from "../../gpu-nodes/training/router/check-corpus.ts";
import { findCatalogEntry, resolveModelsDir } from "../../gpu-nodes/tools/models/model-catalog.ts";
import { renderExamplePrompt } from "./routing/render-router-prompts.ts";
import { renderAfterRouteLabel } from "../../schema/harness/render-view-lines.ts";
import { openRawPrefiller, type PrefillLimit } from "./routing/measure-prefill-limit.ts";
import { chatTemplateFamilySchema } from "../../schema/harness/chat-templates.ts";
import {
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_HARNESS,
  buildDefaultHarness,
} from "../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../schema/harness/harness-settings.ts";
import { requestRoute } from "../harness/generate-requests.ts";
import { createMemoryLogger } from "../harness/start-test-node.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { renderBarChartSvg } from "./plots/render-bar-chart-svg.ts";
import { routeByKeywords } from "./routing/keyword-router.ts";
import {
  applyLowConfidenceRule,
  chooseLowConfidenceThreshold,
  measureRouting,
  type RoutePrediction,
} from "./routing/route-metrics.ts";
import {
  readMisroutedNotes,
  renderRouteEvalMarkdown,
  type RouteEvalReport,
} from "./routing/render-route-eval.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ROUTERS = ["keyword", "zero-shot", "few-shot", "trained"] as const;
type RouterName = RouteEvalReport["results"][number]["router"];
const LABELS = DEFAULT_HARNESS.router.labels;

const { values } = parseArgs({
  options: {
    sets: { type: "string" },
    routers: { type: "string" },
    limit: { type: "string" },
    // The node's own default (cores − 1: 1 here), so the eval measures the route hop as `npm start` serves it.
    threads: { type: "string", default: String(defaultThreadCount(availableParallelism())) },
    "route-threads": { type: "string", default: String(defaultRouteThreadCount(availableParallelism())) },
    out: { type: "string" },
    family: { type: "string", default: "served" },
    smoke: { type: "boolean", default: false },
    /** A previous report whose (router, set) rows this run did not measure are kept (a long run, reused). */
    merge: { type: "string" },
  },
});
const smoke = values.smoke;
const SETS = ["dev", "test", "ood", "steady"];
const sets = (values.sets ?? (smoke ? "test" : SETS.join(","))).split(",").filter(Boolean);
const routers = (values.routers ?? (smoke ? "keyword,trained" : ROUTERS.join(",")))
  .split(",")
  .filter(Boolean) as RouterName[];
const limit = Number(values.limit ?? (smoke ? "16" : "0"));
const RESULTS_DIR = join(ROOT, "test/bench/results");
const out = values.out ?? join(smoke ? tmpdir() : RESULTS_DIR, smoke ? "route-eval-smoke" : "route-eval");
const unknownRouter = routers.find((r) => !(ROUTERS as readonly string[]).includes(r));
if (unknownRouter !== undefined || sets.some((s) => !SETS.includes(s)) || !(limit >= 0)) {
  throw new Error(
    `eval:route: bad --routers, --sets or --limit (routers: ${ROUTERS.join(", ")}; sets: ${SETS.join(", ")})`,
  );
}
const familyOption = values.family === "served" ? "served" : chatTemplateFamilySchema.parse(values.family);

const smol = findCatalogEntry("smollm2-135m-instruct");
const basePath =
  process.env["MOL_ROUTER_BASE"] ?? join(resolveModelsDir(process.env), smol?.fileName ?? "missing.gguf");
const adapterPath =
  process.env["MOL_ROUTER_ADAPTER"] ?? join(ROOT, "gpu-nodes/training/router/adapters/l0-smollm2.gguf");
if (!existsSync(basePath))
  throw new Error(`no base model at ${basePath}: run \`npm run molmesh -- models pull\``);

const { records } = loadCorpus();
const { records: ood } = loadCorpus(join(ROOT, "gpu-nodes/training/router/corpus-ood"));
const bySet: Record<string, CorpusRecord[]> = {
  dev: records.filter((r) => r.split === "dev"),
  test: records.filter((r) => r.split === "test"),
  ood,
  steady: records.filter((r) => r.split === "test" && (r.context?.length ?? 0) > 0),
};

const nats = await startNatsServer();
const engine = await createLlamaEngine({
  baseModelPath: basePath,
  adapters: [
    { id: "l0-bare" },
    ...(routers.includes("trained") ? [{ id: "l0", loraPath: adapterPath }] : []),
  ],
  threads: Number(values.threads),
  routeThreads: Number(values["route-threads"]),
  contextSize: 2048,
  slotsPerAdapter: 1,
  maxWaitingPerAdapter: 4,
  now: () => performance.now(),
  fingerprintFile,
});
// What the edge renders for this node: its heartbeat's chat format (served), unless --family names one.
const family = familyOption === "served" ? (engine.servedModel?.templateFamily ?? "plain") : familyOption;
/** The harness the views are rendered with: the edge's default for a model of this chat format. */
const baseHarness =
  family === "plain"
    ? DEFAULT_HARNESS
    : buildDefaultHarness({ family, contextTokens: DEFAULT_CONTEXT_TOKENS });

/**
 * Few-shot: two short training messages per label, in the router's own system line (as earlier turns instead,
 * the bare base copies the last exemplar's label: 7 of 48 dev examples right against 13 in the system line).
 */
function fewShotHarness(): HarnessDocument {
  const train = records.filter((r) => r.split === "train" && !r.context && r.message.length < 70);
  const shots = LABELS.flatMap((label) => train.filter((r) => r.label === label).slice(3, 5));
  const examples = shots.map((r) => `"${r.message}" → ${r.label}`).join("; ");
  const router = {
    ...baseHarness.router,
    systemPrompt: `${baseHarness.router.systemPrompt} Examples: ${examples}.`,
  };
  return { ...baseHarness, router };
}

const nodeNc = await connect({ servers: nats.url });
const client = await connect({ servers: nats.url });
const node = await startGpuNode({
  nc: nodeNc,
  engine,
  nodeId: "eval-node",
  logger: createMemoryLogger().logger,
  now: () => performance.now(),
  clock: () => Date.now(),
});

const harnesses: Partial<Record<RouterName, HarnessDocument>> = { "few-shot": fewShotHarness() };

function hop(router: RouterName, view: string, requestId: string, conversationId: string) {
  return requestRoute(client, {
    requestId,
    slotKey: conversationId,
    adapter: router === "trained" ? "l0" : "l0-bare",
    choices: [...LABELS],
    prompt: view,
    // As the edge sends it: the node extends the slot by the label and the next user line's opening once idle.
    afterChoice: renderAfterRouteLabel(harnesses[router] ?? baseHarness),
    timeoutMs: 60_000,
  });
}

/**
 * Before a steady set's measured hop: in a conversation the next message comes after the answer has streamed
 * (seconds), by when the node has extended the router slot's view (it waits only for routes and answers to end).
 * 250 ms is far less than any real gap and more than the extension takes here.
 */
const STEADY_TURN_GAP_MS = 250;
/**
 * Before a cold set's hop: the cold sets run every example in one conversation of the slot, so back to back the
 * previous example's slot extension (~30 ms, for a next turn that never comes) would still hold the slot and the
 * measured hop would wait for it. A new conversation reaches a node that has finished the last one's background
 * work; 100 ms is more than the extension takes here.
 */
const COLD_GAP_MS = 100;

async function route(
  router: RouterName,
  set: string,
  example: CorpusRecord,
  i: number,
): Promise<RoutePrediction> {
  const previous = example.context?.at(-1)?.label;
  if (router === "keyword") {
    const { label, confidence } = routeByKeywords(example.message);
    return { id: example.id, gold: example.label, predicted: label, confidence, previous };
  }
  const harness = harnesses[router] ?? baseHarness;
  // Cold sets: one conversation per router, so only the router's system line is in the slot (as for a slot
  // another conversation used last). Steady: the earlier turns go first, each in the view the edge renders then.
  const conversationId = set === "steady" ? `steady-${router}-${example.id}` : `eval-${router}`;
  const context = example.context ?? [];
  if (set === "steady") {
    for (const [k, turn] of context.entries()) {
      const earlier = { ...example, context: context.slice(0, k), message: turn.message };
      await hop(router, renderExamplePrompt(earlier, harness), `${router}-${i}-${k}`, conversationId);
    }
    if (context.length > 0) await new Promise((resolve) => setTimeout(resolve, STEADY_TURN_GAP_MS));
  } else {
    await new Promise((resolve) => setTimeout(resolve, COLD_GAP_MS));
  }
  const started = performance.now();
  const result = await hop(router, renderExamplePrompt(example, harness), `${router}-${i}`, conversationId);
  return {
    id: example.id,
    gold: example.label,
    predicted: result.label,
    confidence: result.confidence ?? 1,
    hopMs: performance.now() - started,
    prefillTokens: result.usage.evaluatedPromptTokens,
    cachedTokens: result.usage.cachedPromptTokens,
    previous,
  };
}

const threads = Number(values.threads);
const routeThreads = Math.max(threads, Number(values["route-threads"]));
/** Threads a row's hops ran on: the trained l0 has a context of its own that may widen; the others share the base's. */
const rowThreads = (router: RouterName) => (router === "trained" ? routeThreads : threads);
/** The physical limit of a row, and 1 against 2 threads on a typical cold hop (is the node's count right?). */
const prefiller = smoke
  ? undefined
  : await openRawPrefiller({
      modelPath: basePath,
      threadCounts: [...new Set([1, 2, threads, routeThreads])],
      sampleText: records
        .slice(0, 8)
        .map((r) => renderExamplePrompt(r, baseHarness))
        .join(""),
    });
async function measureLimit(
  metrics: { prefillTokens?: { p50: number; cachedP50: number } | null },
  rowThreadCount: number,
) {
  const tokens = metrics.prefillTokens;
  if (!prefiller || !tokens) return undefined;
  return prefiller.measure({ threads: rowThreadCount, heldTokens: tokens.cachedP50, tokens: tokens.p50 });
}

const report: RouteEvalReport = {
  machine: {
    cpus: (await import("node:os")).cpus().length,
    threads,
    routeThreads,
    base: basePath,
    adapter: routers.includes("trained") ? adapterPath : null,
  },
  views: { family, contextTokens: baseHarness.contextTokens },
  results: [],
  lowConfidence: [],
  misrouted: [],
};
const threadsCheck: PrefillLimit[] = [];
report.threadsCheck = threadsCheck;
const predictions = new Map<string, RoutePrediction[]>();
try {
  for (const router of routers) {
    for (const set of sets) {
      const examples = (bySet[set] ?? []).slice(0, limit > 0 ? limit : undefined);
      const out: RoutePrediction[] = [];
      for (const [i, example] of examples.entries()) out.push(await route(router, set, example, i));
      predictions.set(`${router}/${set}`, out);
      const metrics = measureRouting(out, LABELS);
      // Right after the row's hops, so the limit sees the machine as they did.
      const raw = await measureLimit(metrics, rowThreads(router));
      report.results.push({ router, set, metrics, ...(raw ? { limit: raw } : {}) });
      console.log(
        `${router} ${set}: accuracy ${(metrics.accuracy * 100).toFixed(1)}% macro-F1 ${metrics.macroF1.toFixed(3)} ECE ${metrics.ece.toFixed(3)} p50 ${metrics.hopMs?.p50.toFixed(0) ?? "-"} ms, ${metrics.prefillTokens?.p50 ?? "-"} tokens prefilled (raw ${raw?.ms.toFixed(0) ?? "-"} ms)`,
      );
    }
    const dev = predictions.get(`${router}/dev`);
    const test = predictions.get(`${router}/test`);
    if (dev && router !== "keyword") {
      const chosen = chooseLowConfidenceThreshold(dev);
      const ruled = test?.map((p) => applyLowConfidenceRule(p, chosen.threshold));
      report.lowConfidence.push({
        router,
        threshold: chosen.threshold,
        devAccuracy: chosen.accuracy,
        testAccuracyRuled: ruled
          ? ruled.filter((p) => p.gold === p.predicted).length / Math.max(1, ruled.length)
          : null,
      });
    }
    const byId = new Map(records.map((r) => [r.id, r]));
    for (const p of (test ?? []).filter((x) => x.gold !== x.predicted)) {
      report.misrouted.push({ router, ...p, message: byId.get(p.id)?.message.slice(0, 160) ?? "" });
    }
  }
  const typical = report.results.find((r) => r.set !== "steady" && r.metrics.prefillTokens)?.metrics;
  if (prefiller && typical?.prefillTokens) {
    for (const n of [1, 2]) {
      const { p50, cachedP50 } = typical.prefillTokens;
      threadsCheck.push(await prefiller.measure({ threads: n, heldTokens: cachedP50, tokens: p50 }));
    }
  }
} finally {
  await prefiller?.close();
  await node.stop(1_000);
  await Promise.allSettled([client.close(), nodeNc.close()]);
  await nats.dispose();
}

if (values.merge) {
  const earlier = JSON.parse(readFileSync(values.merge, "utf8")) as RouteEvalReport;
  if (earlier.views.family !== family) {
    throw new Error(
      `--merge: ${values.merge} rendered views as ${earlier.views.family}, this run as ${family}`,
    );
  }
  // Kept: the rows this run did not measure; the dev threshold and test misroutes where it did not rerun those.
  const measured = (router: RouterName, set: string) => routers.includes(router) && sets.includes(set);
  report.results = [...earlier.results.filter((r) => !measured(r.router, r.set)), ...report.results];
  if (threadsCheck.length === 0) report.threadsCheck = earlier.threadsCheck ?? [];
  report.machine.adapter ??= earlier.machine.adapter;
  report.lowConfidence = [
    ...earlier.lowConfidence.filter((l) => !measured(l.router, "dev")),
    ...report.lowConfidence,
  ];
  report.misrouted = [...earlier.misrouted.filter((m) => !measured(m.router, "test")), ...report.misrouted];
}
const order = (r: { router: RouterName }) => ROUTERS.indexOf(r.router);
report.results.sort((a, b) => order(a) - order(b) || SETS.indexOf(a.set) - SETS.indexOf(b.set));
const plotted = ROUTERS.filter((r) => report.results.some((x) => x.router === r));
mkdirSync(join(out, ".."), { recursive: true });
writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + "\n");
// The hand-read misroutes explain the committed report, and no other run's.
const committed = out === join(RESULTS_DIR, "route-eval");
writeFileSync(`${out}.md`, renderRouteEvalMarkdown(report, committed ? readMisroutedNotes(RESULTS_DIR) : {}));
writeFileSync(
  `${out}.svg`,
  renderBarChartSvg({
    title: `Route accuracy by router (route hop over NATS, ${basename(basePath, ".gguf")}, ${family} views)`,
    yLabel: "accuracy %",
    categories: sets,
    series: plotted.map((router) => ({
      name: router,
      values: sets.map((set) => {
        const r = report.results.find((x) => x.router === router && x.set === set);
        return r ? Number((r.metrics.accuracy * 100).toFixed(1)) : Number.NaN;
      }),
    })),
  }),
);
console.log(`wrote ${out}.{json,md,svg}`);
