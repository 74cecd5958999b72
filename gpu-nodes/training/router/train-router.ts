/**
 * `npm run train:router`: trains l0 for SmolLM2-135M-Instruct and commits-ready writes it with its manifest.
 * 1. a venv under .cache/venv-router from gpu-nodes/training/router/requirements.txt (reinstalled when it changes);
 * 2. the corpus's route prompts, rendered by the edge's views and tokenized by the node (render-router-prompts.ts);
 * 3. the PyTorch + PEFT trainer (train_router.py), which exports a llama.cpp LoRA GGUF;
 * 4. the dev split through the real route hop with the new adapter (eval-route.ts): dev accuracy and the
 *    low-confidence threshold go into gpu-nodes/training/router/adapters/manifest.json.
 * Env: MOL_ROUTER_BASE (base GGUF; default the models cache's SmolLM2), MOL_ROUTER_TRAIN_ARGS (extra trainer flags).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findCatalogEntry, resolveModelsDir } from "../../tools/models/model-catalog.ts";
import { TRAINED_ROUTER_DIR, type TrainedRouterManifest } from "../../tools/models/find-trained-router.ts";
import { DEFAULT_CORPUS_DIR } from "./check-corpus.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const WORK = join(ROOT, ".cache/router");
const VENV = join(ROOT, ".cache/venv-router");
const REQUIREMENTS = join(ROOT, "gpu-nodes/training/router/requirements.txt");
const ADAPTER_NAME = "l0-smollm2.gguf";
/** Chosen to fit the hour on 2 CPU cores (see the training README for what each costs). */
const TRAIN_ARGS = [
  "--rank",
  "16",
  "--alpha",
  "32",
  "--lr",
  "1e-3",
  "--batch",
  "16",
  "--epochs",
  "3",
  // Adapted layers, chosen on dev on the grown corpus: 3 -> 92.3 %, 6 -> 93.8 %, 9 -> 94.9 % (41 min on a box
  // under load), 12 -> 96.1 % (31 min on an idle one); rank and epochs did not move dev at 3 layers.
  "--layers",
  "12",
  "--encode-budget-s",
  "900",
  "--time-budget-s",
  "2700",
];

function run(command: string, args: readonly string[], env: Record<string, string> = {}): string {
  console.log(`$ ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  process.stdout.write(result.stdout);
  if (result.status !== 0) throw new Error(`${command} exited with ${result.status}`);
  return result.stdout;
}

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

function ensureVenv(): string {
  const python = join(VENV, "bin/python");
  const stamp = join(VENV, "requirements.sha256");
  const wanted = sha256(readFileSync(REQUIREMENTS));
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, "utf8") === wanted) return python;
  if (!existsSync(python)) run("python3", ["-m", "venv", VENV]);
  run(python, ["-m", "pip", "install", "--quiet", "-r", REQUIREMENTS]);
  writeFileSync(stamp, wanted);
  return python;
}

/** The corpus as trained on: every shard's bytes, in name order. */
function hashCorpus(): string {
  const hash = createHash("sha256");
  for (const name of readdirSync(DEFAULT_CORPUS_DIR)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()) {
    hash.update(name).update(readFileSync(join(DEFAULT_CORPUS_DIR, name)));
  }
  return hash.digest("hex");
}

const entry = findCatalogEntry("smollm2-135m-instruct");
if (!entry) throw new Error("the model catalogue has no smollm2-135m-instruct");
const basePath = process.env["MOL_ROUTER_BASE"] ?? join(resolveModelsDir(process.env), entry.fileName);
if (!existsSync(basePath))
  throw new Error(`no base at ${basePath}: run \`npm run molmesh -- models pull\` first`);
const baseSha256 = sha256(readFileSync(basePath));
if (baseSha256 !== entry.sha256)
  throw new Error(`${basePath} is not the catalogued SmolLM2 (sha256 ${baseSha256})`);

mkdirSync(WORK, { recursive: true });
const started = Date.now();
// `--from-log <trainer log> <adapter> [eval report]`: finish a run whose trainer ran on its own (e.g. in the background).
const fromLog = process.argv.indexOf("--from-log");
const extra = (process.env["MOL_ROUTER_TRAIN_ARGS"] ?? "").split(" ").filter(Boolean);
const out = fromLog > 0 ? (process.argv[fromLog + 2] ?? "") : join(WORK, ADAPTER_NAME);
const log = fromLog > 0 ? readFileSync(process.argv[fromLog + 1] ?? "", "utf8") : train();

function train(): string {
  const python = ensureVenv();
  const prompts = join(WORK, "prompts.jsonl");
  run("npx", ["tsx", "test/bench/routing/render-router-prompts.ts", basePath, prompts]);
  const trainer = "gpu-nodes/training/router/train_router.py";
  // Lower-layer states kept between runs: a rerun with other hyperparameters (or a grown corpus) skips the
  // encoding it has done before; the manifest's trainer summary says how many came from the cache.
  const statesCache = join(WORK, "lower-states.pt");
  const io = [
    "--prompts",
    prompts,
    "--base",
    basePath,
    "--out",
    out,
    "--threads",
    "2",
    "--states-cache",
    statesCache,
  ];
  return run(python, [trainer, ...io, ...TRAIN_ARGS, ...extra]);
}
const summaryLine = log.split("\n").find((l) => l.startsWith("SUMMARY "));
if (!summaryLine) throw new Error("the trainer printed no SUMMARY line");
const summary = JSON.parse(summaryLine.slice("SUMMARY ".length)) as Record<string, unknown>;
const trainingSeconds = fromLog > 0 ? Number(summary["totalSeconds"]) : (Date.now() - started) / 1000;

mkdirSync(TRAINED_ROUTER_DIR, { recursive: true });
copyFileSync(out, join(TRAINED_ROUTER_DIR, ADAPTER_NAME));
// A finished run may bring the eval report that already has the trained router's dev split in it.
const devReport = fromLog > 0 ? process.argv[fromLog + 3] : undefined;
const devOut = devReport?.replace(/\.json$/, "") ?? join(WORK, "dev-eval");
if (devReport === undefined) {
  const evalArgs = [
    "tsx",
    "test/bench/eval-route.ts",
    "--sets",
    "dev",
    "--routers",
    "trained",
    "--out",
    devOut,
  ];
  run("npx", evalArgs, { MOL_ROUTER_BASE: basePath });
}
const dev = JSON.parse(readFileSync(`${devOut}.json`, "utf8")) as {
  results: Array<{ router: string; set: string; metrics: { accuracy: number } }>;
  lowConfidence: Array<{ router: string; threshold: number }>;
  views: { family: string; contextTokens: number };
};
const trainedDev = dev.results.find((r) => r.router === "trained" && r.set === "dev");
const trainedTest = dev.results.find((r) => r.router === "trained" && r.set === "test");
const manifest: TrainedRouterManifest = {
  adapter: ADAPTER_NAME,
  baseModel: entry.name,
  baseSha256,
  adapterSha256: sha256(readFileSync(out)),
  corpusSha256: hashCorpus(),
  hyperparameters: {
    ...(summary["hyperparameters"] as object),
    trainer: summary,
    args: [...TRAIN_ARGS, ...extra],
  },
  devAccuracy: trainedDev?.metrics.accuracy ?? null,
  minConfidence: dev.lowConfidence.find((l) => l.router === "trained")?.threshold ?? null,
  // Filled in by the full `npm run eval:route` (test/routing/route-eval-report.test.ts holds them equal).
  testAccuracy: trainedTest?.metrics.accuracy ?? null,
  views: dev.views,
  trainingSeconds,
  trainedAt: new Date().toISOString(),
};
writeFileSync(join(TRAINED_ROUTER_DIR, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
console.log(
  `l0 written to ${TRAINED_ROUTER_DIR}: dev accuracy ${manifest.devAccuracy}, ${trainingSeconds.toFixed(0)} s`,
);
