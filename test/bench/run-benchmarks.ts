/**
 * `npm run bench`: every benchmark (node, SmolLM2, edge, fleet, concurrency) in sequence on the local mesh, then the SVG
 * plots and one combined report, test/bench/results/REPORT.md. `npm run bench:smoke` (`--smoke`) runs each in a
 * CI-sized form into a temporary folder, leaving the committed results alone, and exits non-zero if a benchmark
 * fails or any of its figures is empty or NaN.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../harness/paths.ts";
import { findEmptyFigures } from "./find-empty-figures.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { renderBenchPlots, type BenchName, type BenchPlot } from "./render-bench-plots.ts";
import { renderCombinedReport, type BenchSection } from "./render-combined-report.ts";
import { runBenchProcess } from "./run-bench-process.ts";
import { showBenchProgress } from "./show-bench-progress.ts";

interface BenchSpec {
  name: BenchName;
  script: string;
  /** Knobs for the CI-sized run: seconds each, yet every figure still measured at least twice. */
  smokeEnv: Record<string, string>;
}

const BENCHES: readonly BenchSpec[] = [
  { name: "node", script: "bench-node.ts", smokeEnv: { MOL_BENCH_TURNS: "3", MOL_BENCH_ROUTES: "10" } },
  {
    // Under a minute on the 2-core box with the model present; without it the section says it was skipped.
    name: "smollm2",
    script: "bench-smollm2.ts",
    smokeEnv: {
      MOL_BENCH_TURNS: "2",
      MOL_BENCH_ROUTES: "6",
      MOL_BENCH_DECODE_TOKENS: "16",
      MOL_BENCH_PREFILL_LINES: "2",
    },
  },
  {
    name: "edge",
    script: "bench-edge.ts",
    smokeEnv: { MOL_BENCH_LENGTHS: "10,50", MOL_BENCH_SAMPLE_TURNS: "5", MOL_BENCH_CRITICAL_TURNS: "3" },
  },
  {
    name: "fleet",
    script: "bench-fleet.ts",
    smokeEnv: {
      MOL_BENCH_NODES: "2",
      MOL_BENCH_CONVERSATIONS: "4",
      MOL_BENCH_TURNS: "2",
      MOL_BENCH_CONCURRENCY: "2",
      // The SmolLM2 run at full size is minutes of 2,000-token prefills: in the smoke two short conversations
      // on two nodes still measure affinity against the queue group, twice each.
      MOL_BENCH_SMOL_NODES: "2",
      MOL_BENCH_SMOL_CONVERSATIONS: "2",
      MOL_BENCH_SMOL_TURNS: "2",
      MOL_BENCH_SMOL_CONCURRENCY: "2",
      MOL_BENCH_SMOL_MESSAGE_BYTES: "600",
      MOL_BENCH_SMOL_CONTEXT: "4096",
    },
  },
  {
    name: "concurrency",
    script: "bench-concurrency.ts",
    smokeEnv: { MOL_BENCH_LEVELS: "1,4", MOL_BENCH_LEVEL_TURNS: "4" },
  },
];

/** Too long for every run: their own command writes their report, which the combined one links when present. */
const LINKED = [
  {
    file: "soak.md",
    title: "Soak (node SIGKILLs and a nats-server restart under load, reconciled)",
    command: "npm run bench:soak",
  },
];

const smoke = process.argv.includes("--smoke");
const outDir = smoke
  ? await mkdtemp(join(tmpdir(), "molmesh-bench-smoke-"))
  : join(REPO_ROOT, "test", "bench", "results");
const timeoutMs = (smoke ? 5 : 60) * 60_000;
const display = showBenchProgress();
const sections: BenchSection[] = [];

for (const bench of BENCHES) {
  display.start(bench.name);
  const run = await runBenchProcess({
    script: bench.script,
    env: { MOL_BENCH_OUT: outDir, ...(smoke ? bench.smokeEnv : {}) },
    timeoutMs,
    onProgress: (progress) => display.update(progress),
  });
  const section = await collectSection(bench.name, run);
  sections.push(section);
  for (const p of section.plots) await writeFile(join(outDir, p.file), p.svg);
  display.finish(
    bench.name,
    section.failure ? `FAILED after ${Math.round(run.seconds)} s` : `ok in ${Math.round(run.seconds)} s`,
  );
  if (section.failure) {
    process.stderr.write(`${section.failure}\n--- last output of ${bench.script} ---\n`);
    process.stderr.write(`${run.output.split("\n").slice(-40).join("\n")}\n`);
  }
}

const command = smoke ? "npm run bench:smoke" : "npm run bench";
await writeFile(
  join(outDir, "REPORT.md"),
  renderCombinedReport({
    command,
    machine: collectMachineFacts(),
    sections,
    linked: LINKED.filter((l) => existsSync(join(outDir, l.file))),
  }),
);
const failed = sections.filter((s) => s.failure);
process.stderr.write(
  `${command}: ${sections.length - failed.length}/${sections.length} benchmarks ok; report in ${join(outDir, "REPORT.md")}\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;

/** A benchmark's outcome: its report and plots, or why there are none. */
async function collectSection(
  name: BenchName,
  run: Awaited<ReturnType<typeof runBenchProcess>>,
): Promise<BenchSection> {
  const base = { name, seconds: run.seconds };
  if (run.exitCode !== 0) {
    const why = run.timedOut ? `timed out after ${timeoutMs / 60_000} min` : `exited with ${run.exitCode}`;
    return { ...base, markdown: null, plots: [], failure: `${name}: ${why}` };
  }
  let report: unknown;
  let markdown: string;
  try {
    report = JSON.parse(await readFile(join(outDir, `${name}.json`), "utf8"));
    markdown = await readFile(join(outDir, `${name}.md`), "utf8");
  } catch (error) {
    return { ...base, markdown: null, plots: [], failure: `${name}: no report (${String(error)})` };
  }
  const empty = findEmptyFigures(report);
  let plots: BenchPlot[] = [];
  let plotError: string | null = null;
  try {
    plots = renderBenchPlots(name, report);
  } catch (error) {
    plotError = `${name}: plotting failed (${String(error)})`;
  }
  const failure =
    plotError ?? (empty.length > 0 ? `${name}: empty or NaN figures at ${empty.join(", ")}` : null);
  return { ...base, markdown, plots, failure };
}
