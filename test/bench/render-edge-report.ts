import { renderFacts, renderMarkdownRow } from "./render-markdown-row.ts";
type Pct = { p50: number; p95: number };

export interface EdgeReport {
  command: string;
  machine: Record<string, string | number>;
  overhead: Array<{
    turns: number;
    samples: number;
    p50Ms: number;
    p95Ms: number;
    meanMs: number;
    /** Per stage, see splitOverhead in bench-edge.ts (absent in reports written before it). */
    stagesP50Ms?: { routeHop: number; answerHop: number; edge: number };
  }>;
  hops: {
    turns: number;
    routeMs: Pct;
    answerFirstTokenMs: Pct;
    answerTotalMs: Pct;
    summaryMs: Pct;
    clientTurnMs: Pct;
    criticalShareOfRouteAndSummary: number;
    shareIfSummaryWereInline: number;
    backToBackClientTurnMs: Pct;
    backToBackAnswerFirstTokenMs?: Pct;
    backToBackShareOfRouteAndSummary: number;
    backToBackOverPacedP50: number;
    backToBackShareOfRouteAndSummaryWait: number;
  };
}

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

/** The markdown half of the edge benchmark report. */
export function renderEdgeReport(r: EdgeReport): string {
  const h = r.hops;
  return [
    "# Edge benchmark",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    "",
    "## Edge overhead per turn against conversation length",
    "",
    "Client time of a non-streamed `POST /v1/responses` minus the route and answer time the GPU node reported",
    "(instant engine): HTTP, the Worker, the conversation Durable Object (SQLite timeline, views) and NATS.",
    "",
    renderMarkdownRow(["conversation length (turns)", "sampled turns", "p50 ms", "p95 ms", "mean ms"]),
    renderMarkdownRow(["---:", "---:", "---:", "---:", "---:"]),
    ...r.overhead.map((o) => renderMarkdownRow([o.turns, o.samples, o.p50Ms, o.p95Ms, o.meanMs])),
    "",
    "Where it goes (p50 ms per stage, from the hop timings the edge records: a hop's edge time minus the node's",
    "is NATS and the hop client; the rest is HTTP, the Worker's auth and limiter, the Durable Object call, its",
    "timeline writes and views, which the edge does not time apart):",
    "",
    renderMarkdownRow([
      "conversation length (turns)",
      "route hop: NATS",
      "answer hop: NATS",
      "HTTP + Worker + DO",
    ]),
    renderMarkdownRow(["---:", "---:", "---:", "---:"]),
    ...r.overhead.flatMap((o) =>
      o.stagesP50Ms
        ? [renderMarkdownRow([o.turns, o.stagesP50Ms.routeHop, o.stagesP50Ms.answerHop, o.stagesP50Ms.edge])]
        : [],
    ),
    "",
    `## Hop breakdown on the tiny model (${h.turns} routed turns, answers capped at 64 tokens)`,
    "",
    renderMarkdownRow(["hop", "p50 ms", "p95 ms"]),
    renderMarkdownRow(["---", "---:", "---:"]),
    renderMarkdownRow(["route", h.routeMs.p50, h.routeMs.p95]),
    renderMarkdownRow(["answer, first token", h.answerFirstTokenMs.p50, h.answerFirstTokenMs.p95]),
    renderMarkdownRow(["answer, total", h.answerTotalMs.p50, h.answerTotalMs.p95]),
    renderMarkdownRow(["summary (after the response)", h.summaryMs.p50, h.summaryMs.p95]),
    renderMarkdownRow(["client turn", h.clientTurnMs.p50, h.clientTurnMs.p95]),
    "",
    `Route + summary on the client's critical path, for a client that reads each answer before the next message:`,
    `**${pct(h.criticalShareOfRouteAndSummary)}** of client time (the summary runs after the response ends). Were the`,
    `summary inline, it would be ${pct(h.shareIfSummaryWereInline)}. A client that sends its next message the moment`,
    `an answer ends: client turn p50 ${h.backToBackClientTurnMs.p50} ms, p95 ${h.backToBackClientTurnMs.p95} ms,`,
    ...(h.backToBackAnswerFirstTokenMs
      ? [
          `its answer's first token p50 ${h.backToBackAnswerFirstTokenMs.p50} ms, p95 ${h.backToBackAnswerFirstTokenMs.p95} ms`,
          `(paced ${h.answerFirstTokenMs.p50} / ${h.answerFirstTokenMs.p95} ms);`,
        ]
      : []),
    `${h.backToBackOverPacedP50}× the paced p50; route + summary wait (recorded waits plus time beyond the paced p50)`,
    `is ${pct(h.backToBackShareOfRouteAndSummaryWait)} of its time, and its time outside the answer hop`,
    `${pct(h.backToBackShareOfRouteAndSummary)}.`,
    "The Macaron-V1 report gives 32 % for route + summary on its Venti model.",
    "",
  ].join("\n");
}
