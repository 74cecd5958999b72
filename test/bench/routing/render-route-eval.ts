import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { PrefillLimit } from "./measure-prefill-limit.ts";
import type { RouteMetrics } from "./route-metrics.ts";

export type RouterName = "keyword" | "zero-shot" | "few-shot" | "trained";

export interface RouteEvalReport {
  /** routeThreads: the trained l0's hops, alone on the node, may use this many (absent in older reports). */
  machine: { cpus: number; threads: number; routeThreads?: number; base: string; adapter: string | null };
  /** The chat format and context the views were rendered for (the edge's default harness for that model). */
  views: { family: string; contextTokens: number };
  results: Array<{
    router: RouterName;
    set: string;
    metrics: RouteMetrics;
    /** node-llama-cpp alone prefilling the row's p50 tokens after its p50 reused ones, in the same run. */
    limit?: PrefillLimit | undefined;
  }>;
  /** The same raw prefill at 1 and 2 threads: whether the node's thread count is the faster one here. */
  threadsCheck?: PrefillLimit[] | undefined;
  lowConfidence: Array<{
    router: RouterName;
    threshold: number;
    devAccuracy: number;
    testAccuracyRuled: number | null;
  }>;
  misrouted: Array<{
    router: RouterName;
    id: string;
    gold: string;
    predicted: string;
    confidence: number;
    message: string;
  }>;
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** Why the trained router got a test example wrong, by example id: written by a person reading the misroutes. */
export const misroutedNotesSchema = z.record(z.string(), z.string().min(1).max(200));
export type MisroutedNotes = z.infer<typeof misroutedNotesSchema>;
export const MISROUTED_NOTES_FILE = "route-eval-notes.json";

export function readMisroutedNotes(resultsDir: string): MisroutedNotes {
  const path = join(resultsDir, MISROUTED_NOTES_FILE);
  return existsSync(path) ? misroutedNotesSchema.parse(JSON.parse(readFileSync(path, "utf8"))) : {};
}

const rate = (l: PrefillLimit) => ((l.tokens / l.ms) * 1000).toFixed(0);
const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/** The route eval as Markdown: the summary table (the one in docs/routing.md), then per-label figures and confusions. */
export function renderRouteEvalMarkdown(report: RouteEvalReport, notes: MisroutedNotes = {}): string {
  const lines = [
    "# Route eval",
    "",
    `Route hop over NATS on a real GPU node (llama.cpp, ${report.machine.threads} threads` +
      (report.machine.routeThreads !== undefined && report.machine.routeThreads !== report.machine.threads
        ? `, ${report.machine.routeThreads} for a trained-l0 route running alone`
        : "") +
      `, ${report.machine.cpus} CPUs); ` +
      `views rendered by the edge's default harness for a ${report.views.family} model with ${report.views.contextTokens} context tokens.`,
    "",
    renderRouteSummaryTable(report),
    "",
    "Prefilled tokens: what a route hop evaluated (p50; in brackets the p50 it reused from the KV slot). Raw " +
      "prefill: node-llama-cpp alone evaluating that many tokens after that many held ones, same model and threads, " +
      "measured right after the row's hops; hop / raw is the route hop's p50 over it. steady: test's multi-turn " +
      "examples as turn N of a conversation whose earlier turns were routed first in the same slot, then 250 ms " +
      "(a reader's pause, far shorter than a real one) in which the node extends the slot by the label and the next " +
      "user line's opening, as it does once idle. Cold sets (dev, test, ood): one example after another, 100 ms " +
      "apart, so each hop finds the node done with the previous example's slot extension, as a new conversation would.",
    "",
  ];
  const check = report.threadsCheck ?? [];
  if (check.length > 0) {
    const rates = check.map((c) => `${c.threads} thread(s) ${c.ms.toFixed(1)} ms (${rate(c)} tok/s)`);
    lines.push(
      `Threads: the same raw prefill (${check[0]?.tokens} tokens after ${check[0]?.heldTokens}) at ${rates.join(", ")}.`,
      "",
    );
  }
  if (report.lowConfidence.length > 0) {
    lines.push("## Low-confidence rule (keep the previous specialist), threshold chosen on dev", "");
    lines.push(
      "| router | threshold | dev accuracy with rule | test accuracy with rule |",
      "| --- | --- | --- | --- |",
    );
    for (const l of report.lowConfidence) {
      lines.push(
        `| ${l.router} | ${l.threshold} | ${pct(l.devAccuracy)} | ${l.testAccuracyRuled === null ? "–" : pct(l.testAccuracyRuled)} |`,
      );
    }
    lines.push("");
  }
  for (const { router, set, metrics } of report.results) {
    const labels = Object.keys(metrics.perLabel);
    lines.push(`## ${router} on ${set}`, "");
    lines.push("| label | precision | recall | F1 | support |", "| --- | --- | --- | --- | --- |");
    for (const [label, m] of Object.entries(metrics.perLabel)) {
      lines.push(`| ${label} | ${pct(m.precision)} | ${pct(m.recall)} | ${m.f1.toFixed(3)} | ${m.support} |`);
    }
    lines.push(
      "",
      `| gold \\ predicted | ${labels.join(" | ")} |`,
      `| --- |${labels.map(() => " --- |").join("")}`,
    );
    for (const gold of labels) {
      lines.push(`| ${gold} | ${labels.map((p) => metrics.confusion[gold]?.[p] ?? 0).join(" | ")} |`);
    }
    lines.push("");
  }
  const trained = report.misrouted.filter((m) => m.router === "trained");
  const noted = trained.filter((m) => notes[m.id] !== undefined);
  const misrouted = [...noted, ...trained.filter((m) => notes[m.id] === undefined)].slice(0, 20);
  if (misrouted.length > 0) {
    lines.push(
      `## Misrouted test examples (trained): ${trained.length}, the first ${misrouted.length}, the ${noted.length} read by hand first`,
      "",
      "| id | gold | predicted | confidence | message | why |",
    );
    lines.push("| --- | --- | --- | --- | --- | --- |");
    for (const m of misrouted) {
      lines.push(
        `| ${m.id} | ${m.gold} | ${m.predicted} | ${m.confidence.toFixed(2)} | ${cell(m.message)} | ${cell(notes[m.id] ?? "")} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

export function renderRouteSummaryTable(report: RouteEvalReport): string {
  const rows = [
    "| router | set | n | accuracy | macro-F1 | ECE | route hop p50 / p95 | prefilled tokens p50 (reused) | raw prefill | hop / raw |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const { router, set, metrics: m, limit } of report.results) {
    const hop = m.hopMs ? `${m.hopMs.p50.toFixed(0)} / ${m.hopMs.p95.toFixed(0)} ms` : "–";
    const tokens = m.prefillTokens ? `${m.prefillTokens.p50} (${m.prefillTokens.cachedP50})` : "–";
    const raw = limit ? `${limit.ms.toFixed(0)} ms` : "–";
    const ratio = limit && m.hopMs ? `${(m.hopMs.p50 / limit.ms).toFixed(1)}×` : "–";
    rows.push(
      `| ${router} | ${set} | ${m.n} | ${pct(m.accuracy)} | ${m.macroF1.toFixed(3)} | ${m.ece.toFixed(3)} | ${hop} | ${tokens} | ${raw} | ${ratio} |`,
    );
  }
  return rows.join("\n");
}
