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
  /** The last turn's answers: where the conversation is longest (absent in reports of earlier builds). */
  lastTurnTtftP50Ms?: number;
  lastTurnPromptTokensP50?: number;
  hopsPerNode: Record<string, number>;
  maxMinLoad: number;
  /**
   * Answers whose prompt is shorter than the conversation's previous answer prompt: the view was compacted, so no
   * node held a prefix of it and placement had no cache to win (absent in reports of earlier builds).
   */
  compacted?: { answers: number; of: number };
}

export interface FleetReport {
  command: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number>;
  results: FleetModeResult[];
  /** The same comparison on SmolLM2 conversations that grow to about 2,000 tokens. */
  smollm2?: { settings: Record<string, string | number>; results: FleetModeResult[] };
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
    "the previous hop of the same pair reused whole (its prompt and its output). TTFT = route hop + answer's first",
    "token, as the edge timed them.",
    "",
    ...renderModeTable(r.results),
    "",
    "Target: affinity ≥ 90 % of the ideal with max/min load ≤ 1.3; a random queue group gives about 1/N of the ideal.",
    "",
    ...(r.smollm2 ? renderSmollm2Section(r.smollm2) : []),
  ].join("\n");
}

function renderSmollm2Section(s: NonNullable<FleetReport["smollm2"]>): string[] {
  const [affinity, random] = [
    s.results.find((m) => m.mode === "affinity"),
    s.results.find((m) => m.mode === "queue-group"),
  ];
  const ratio = (a?: number, b?: number) => (a !== undefined && b ? `${(a / b).toFixed(2)}×` : "n/a");
  return [
    "## SmolLM2 conversations of about 2,000 tokens",
    "",
    `Settings: ${renderFacts(s.settings)}.`,
    "",
    ...renderModeTable(s.results),
    "",
    `Affinity / queue group, same run: TTFT p50 ${ratio(affinity?.ttftP50Ms, random?.ttftP50Ms)}, p95 ` +
      `${ratio(affinity?.ttftP95Ms, random?.ttftP95Ms)}, last turn p50 ` +
      `${ratio(affinity?.lastTurnTtftP50Ms, random?.lastTurnTtftP50Ms)}.`,
    "Target: affinity TTFT ≤ the queue group's, and ≤ 0.5× of it on these conversations.",
    ...(affinity?.compacted && random?.compacted
      ? [
          `Answers after a compacted view (no KV to reuse anywhere): affinity ${affinity.compacted.answers} of ` +
            `${affinity.compacted.of}, queue group ${random.compacted.answers} of ${random.compacted.of}.`,
        ]
      : []),
    "",
  ];
}

function renderModeTable(results: readonly FleetModeResult[]): string[] {
  return [
    renderMarkdownRow([
      "placement",
      "hops",
      "cached / prompt",
      "cached / ideal",
      "TTFT p50 ms",
      "TTFT p95 ms",
      "last turn: TTFT p50 ms",
      "last turn: prompt tokens p50",
      "max/min hops per node",
      "hops per node",
    ]),
    renderMarkdownRow(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"]),
    ...results.map((m) =>
      renderMarkdownRow([
        m.mode,
        m.hops,
        pct(m.cachedShareOfPrompt),
        pct(m.shareOfIdeal),
        m.ttftP50Ms,
        m.ttftP95Ms,
        m.lastTurnTtftP50Ms ?? "n/a",
        m.lastTurnPromptTokensP50 ?? "n/a",
        m.maxMinLoad,
        Object.entries(m.hopsPerNode)
          .map(([n, c]) => `${n} ${c}`)
          .join(", "),
      ]),
    ),
  ];
}
