import type { ConcurrencyReport } from "./render-concurrency-report.ts";
import type { EdgeReport } from "./render-edge-report.ts";
import type { FleetReport } from "./render-fleet-report.ts";
import type { NodeReport } from "./render-node-report.ts";
import type { Smollm2Report } from "./render-smollm2-report.ts";
import { renderBarChartSvg } from "./plots/render-bar-chart-svg.ts";
import { renderLineChartSvg } from "./plots/render-line-chart-svg.ts";

export interface BenchPlot {
  /** File name next to the report, e.g. `kv-reuse.svg`. */
  file: string;
  title: string;
  svg: string;
}

export type BenchName = "node" | "smollm2" | "edge" | "fleet" | "concurrency";

/** The figures of one benchmark's JSON report as SVG charts. */
export function renderBenchPlots(name: BenchName, report: unknown): BenchPlot[] {
  switch (name) {
    case "node":
      return plotNode(report as NodeReport);
    case "smollm2":
      return plotSmollm2(report as Smollm2Report);
    case "edge":
      return plotEdge(report as EdgeReport);
    case "fleet":
      return plotFleet(report as FleetReport);
    case "concurrency":
      return plotConcurrency(report as ConcurrencyReport);
  }
}

function plot(file: string, title: string, svg: string): BenchPlot {
  return { file, title, svg };
}

function plotNode(r: NodeReport): BenchPlot[] {
  const title = `KV reuse over a ${r.reuse[0]?.turns ?? 0}-turn conversation, per adapter`;
  return [
    plot(
      "kv-reuse.svg",
      title,
      renderBarChartSvg({
        title,
        yLabel: "prompt tokens over the conversation",
        categories: r.reuse.map((x) => x.adapter),
        series: [
          { name: "prompt", values: r.reuse.map((x) => x.promptTokens) },
          { name: "ideal cached", values: r.reuse.map((x) => x.idealCachedTokens) },
          { name: "cached, append-only views", values: r.reuse.map((x) => x.cachedPromptTokens) },
          { name: "cached, naive views", values: r.naiveReuse.map((x) => x.cachedPromptTokens) },
        ],
      }),
    ),
  ];
}

function plotSmollm2(r: Smollm2Report): BenchPlot[] {
  if ("skipped" in r) return [];
  const title = "SmolLM2-135M decode per adapter: the node over NATS against raw node-llama-cpp";
  return [
    plot(
      "smollm2-decode.svg",
      title,
      renderBarChartSvg({
        title,
        yLabel: "decode tokens per second",
        categories: r.speed.map((s) => s.adapter),
        series: [
          { name: "node, requester side", values: r.speed.map((s) => s.decodeTokensPerSecond) },
          { name: "raw, one sequence (median)", values: r.speed.map(() => r.raw.decodeTokensPerSecond) },
        ],
      }),
    ),
  ];
}

function plotEdge(r: EdgeReport): BenchPlot[] {
  const overheadTitle = "Edge overhead per turn against conversation length";
  const hopsTitle = `Hop breakdown on the tiny model (${r.hops.turns} paced turns)`;
  const h = r.hops;
  const hops = [
    ["route", h.routeMs],
    ["answer, first token", h.answerFirstTokenMs],
    ["answer, total", h.answerTotalMs],
    ["summary", h.summaryMs],
    ["client turn", h.clientTurnMs],
  ] as const;
  return [
    plot(
      "edge-overhead.svg",
      overheadTitle,
      renderLineChartSvg({
        title: overheadTitle,
        xLabel: "conversation length (turns, log scale)",
        yLabel: "edge overhead per turn (ms)",
        logX: true,
        series: [
          { name: "p50", points: r.overhead.map((o) => [o.turns, o.p50Ms] as const) },
          { name: "p95", points: r.overhead.map((o) => [o.turns, o.p95Ms] as const) },
        ],
      }),
    ),
    plot(
      "hop-breakdown.svg",
      hopsTitle,
      renderBarChartSvg({
        title: hopsTitle,
        yLabel: "ms",
        categories: hops.map(([name]) => name),
        series: [
          { name: "p50", values: hops.map(([, t]) => t.p50) },
          { name: "p95", values: hops.map(([, t]) => t.p95) },
        ],
      }),
    ),
  ];
}

function plotFleet(r: FleetReport): BenchPlot[] {
  const title = `Fleet placement vs random (${r.settings.nodes} nodes)`;
  const percent = (share: number) => Number((share * 100).toFixed(1));
  return [
    plot(
      "fleet-placement.svg",
      title,
      renderBarChartSvg({
        title,
        yLabel: "%",
        categories: ["cached / prompt", "cached / ideal"],
        series: r.results.map((m) => ({
          name: m.mode === "affinity" ? "affinity (molmesh)" : "queue group (random)",
          values: [percent(m.cachedShareOfPrompt), percent(m.shareOfIdeal)],
        })),
      }),
    ),
  ];
}

function plotConcurrency(r: ConcurrencyReport): BenchPlot[] {
  const throughputTitle = "Turns per second against concurrency (tiny model, whole mesh)";
  const latencyTitle = "Turn latency against concurrency (tiny model, whole mesh)";
  const at = (pick: (l: ConcurrencyReport["levels"][number]) => number) =>
    r.levels.map((l) => [l.concurrency, pick(l)] as const);
  return [
    plot(
      "concurrency-throughput.svg",
      throughputTitle,
      renderLineChartSvg({
        title: throughputTitle,
        xLabel: "concurrent clients (log scale)",
        yLabel: "successful turns per second",
        logX: true,
        series: [{ name: "turns/s", points: at((l) => l.turnsPerSecond) }],
      }),
    ),
    plot(
      "concurrency-latency.svg",
      latencyTitle,
      renderLineChartSvg({
        title: latencyTitle,
        xLabel: "concurrent clients (log scale)",
        yLabel: "client turn latency (ms)",
        logX: true,
        series: [
          { name: "p50", points: at((l) => l.p50Ms) },
          { name: "p95", points: at((l) => l.p95Ms) },
        ],
      }),
    ),
  ];
}
