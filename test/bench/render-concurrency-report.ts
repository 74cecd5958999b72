import type { ConcurrencyLevelResult } from "./measure-concurrency-level.ts";
import { renderFacts, renderMarkdownRow } from "./render-markdown-row.ts";

export interface ConcurrencyReport {
  command: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number>;
  levels: ConcurrencyLevelResult[];
}

/** The markdown half of the concurrency benchmark report. */
export function renderConcurrencyReport(r: ConcurrencyReport): string {
  const errors = (level: ConcurrencyLevelResult) =>
    Object.entries(level.errors)
      .map(([key, count]) => `${count} × ${key}`)
      .join(", ") || "none";
  return [
    "# Concurrency benchmark",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    `Settings: ${renderFacts(r.settings)}.`,
    "",
    "Through the whole local mesh: HTTP to the edge in `wrangler dev` (Worker, conversation Durable Objects), NATS,",
    "one GPU node process running llama.cpp on the tiny model. Each client owns a conversation and sends its next",
    "message the moment an answer ends (non-streamed `POST /v1/responses`: route, answer, then the summary runs in the",
    "background and the next turn waits for it). Latency counts successful turns only; failed turns are not retried.",
    "",
    renderMarkdownRow(["concurrency", "turns", "ok", "errors", "turns/s", "p50 ms", "p95 ms", "wall s"]),
    renderMarkdownRow(["---:", "---:", "---:", "---", "---:", "---:", "---:", "---:"]),
    ...r.levels.map((l) =>
      renderMarkdownRow([
        l.concurrency,
        l.turns,
        l.okTurns,
        errors(l),
        l.turnsPerSecond,
        l.p50Ms,
        l.p95Ms,
        l.wallSeconds,
      ]),
    ),
    "",
  ].join("\n");
}
