import type { KvReuseRow } from "./measure-kv-reuse.ts";
import {
  mib,
  renderFacts,
  renderMarkdownRow,
  renderResidentMemoryRows,
  type ResidentMemory,
} from "./render-markdown-row.ts";
import { sum } from "./stats.ts";

export interface NodeReport {
  command: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number>;
  speed: Array<{
    adapter: string;
    promptTokens: number;
    prefillTokensPerSecond: number;
    completionTokens: number;
    decodeTokensPerSecond: number;
  }>;
  route: { samples: number; p50Ms: number; p95Ms: number; meanMs: number };
  reuse: KvReuseRow[];
  /** The same run with a naive view builder that re-renders the prompt with a changing header. */
  naiveReuse: KvReuseRow[];
  memory: ResidentMemory & {
    baseFileBytes: number;
    adapterFileBytes: Record<string, number>;
  };
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** The markdown half of the node benchmark report. */
export function renderNodeReport(r: NodeReport): string {
  const adapterBytes = Object.values(r.memory.adapterFileBytes).reduce((a, b) => a + b, 0);
  return [
    "# GPU node benchmark",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    `Settings: ${renderFacts(r.settings)}.`,
    "",
    "## Speed per adapter (greedy, fresh slot)",
    "",
    renderMarkdownRow(["adapter", "prompt tokens", "prefill tok/s", "completion tokens", "decode tok/s"]),
    renderMarkdownRow(["---", "---:", "---:", "---:", "---:"]),
    ...r.speed.map((s) =>
      renderMarkdownRow([
        s.adapter,
        s.promptTokens,
        s.prefillTokensPerSecond,
        s.completionTokens,
        s.decodeTokensPerSecond,
      ]),
    ),
    "",
    "## Route hop latency (requester side, over NATS)",
    "",
    `${r.route.samples} routes: p50 ${r.route.p50Ms} ms, p95 ${r.route.p95Ms} ms, mean ${r.route.meanMs} ms.`,
    "",
    `## KV reuse over a ${r.reuse[0]?.turns ?? 0}-turn conversation`,
    "",
    "Ideal = everything already in the slot (previous view + previous answer) is reused. Append-only views, as",
    "molmesh builds them:",
    "",
    ...renderReuseTable(r.reuse),
    "",
    "Baseline: the same run with a deliberately naive view builder that re-renders the whole prompt each turn with",
    "the turn number and the current time in its system line, so the prompt differs from the slot a few tokens in.",
    "",
    ...renderReuseTable(r.naiveReuse),
    "",
    renderReuseComparison(r.reuse, r.naiveReuse),
    "",
    "## Memory",
    "",
    renderMarkdownRow(["part", "bytes"]),
    renderMarkdownRow(["---", "---:"]),
    renderMarkdownRow(["base weights (file)", mib(r.memory.baseFileBytes)]),
    renderMarkdownRow([
      `${Object.keys(r.memory.adapterFileBytes).length} LoRA adapters (files)`,
      kib(adapterBytes),
    ]),
    renderMarkdownRow([`KV per slot (f16, ${r.settings.contextSize} tokens)`, kib(r.memory.kvBytesPerSlot)]),
    ...renderResidentMemoryRows(r.memory),
    "",
  ].join("\n");
}

function renderReuseTable(rows: readonly KvReuseRow[]): string[] {
  return [
    renderMarkdownRow([
      "adapter",
      "prompt tokens",
      "cached tokens",
      "ideal cached",
      "cached / prompt",
      "cached / ideal",
    ]),
    renderMarkdownRow(["---", "---:", "---:", "---:", "---:", "---:"]),
    ...rows.map((x) =>
      renderMarkdownRow([
        x.adapter,
        x.promptTokens,
        x.cachedPromptTokens,
        x.idealCachedTokens,
        x.cachedShareOfPrompt,
        x.shareOfIdeal,
      ]),
    ),
  ];
}

/** The one line a reader wants: how much prefill work the append-only views save over the naive ones. */
function renderReuseComparison(real: readonly KvReuseRow[], naive: readonly KvReuseRow[]): string {
  const total = (rows: readonly KvReuseRow[], pick: (row: KvReuseRow) => number) => sum(rows.map(pick));
  const share = (rows: readonly KvReuseRow[]) =>
    total(rows, (x) => x.cachedPromptTokens) / total(rows, (x) => x.promptTokens);
  const evaluated = (rows: readonly KvReuseRow[]) =>
    total(rows, (x) => x.promptTokens - x.cachedPromptTokens);
  const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
  return (
    `All adapters: append-only views **${pct(share(real))}** of prompt tokens cached, naive views ` +
    `**${pct(share(naive))}**; the naive builder evaluates ${(evaluated(naive) / evaluated(real)).toFixed(1)}× as ` +
    `many prompt tokens (${evaluated(naive)} vs ${evaluated(real)}).`
  );
}
