import { renderFacts, renderMarkdownRow } from "./render-markdown-row.ts";
export interface FleetModeResult {
  mode: "affinity" | "queue-group";
  hops: number;
  promptTokens: number;
  cachedTokens: number;
  idealCachedTokens: number;
  cachedShareOfPrompt: number;
  shareOfIdeal: number;
  ttftP50Ms: number;
  ttftP95Ms: number;
  hopsPerNode: Record<string, number>;
  maxMinLoad: number;
}

export interface FleetReport {
  command: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number>;
  results: FleetModeResult[];
}

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

/** The markdown half of the fleet benchmark report. */
export function renderFleetReport(r: FleetReport): string {
  return [
    "# Fleet placement benchmark",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    `Settings: ${renderFacts(r.settings)}.`,
    "",
    "Route and answer hops of every turn; token ratios over the hops whose (conversation, adapter) ran before. Ideal =",
    "the previous hop of the same pair reused whole (its prompt and its output).",
    "",
    renderMarkdownRow([
      "placement",
      "hops",
      "cached / prompt",
      "cached / ideal",
      "TTFT p50 ms",
      "TTFT p95 ms",
      "max/min hops per node",
      "hops per node",
    ]),
    renderMarkdownRow(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---"]),
    ...r.results.map((m) =>
      renderMarkdownRow([
        m.mode,
        m.hops,
        pct(m.cachedShareOfPrompt),
        pct(m.shareOfIdeal),
        m.ttftP50Ms,
        m.ttftP95Ms,
        m.maxMinLoad,
        Object.entries(m.hopsPerNode)
          .map(([n, c]) => `${n} ${c}`)
          .join(", "),
      ]),
    ),
    "",
    "Target: affinity ≥ 90 % of the ideal with max/min load ≤ 1.3; a random queue group gives about 1/N of the ideal.",
    "",
  ].join("\n");
}
