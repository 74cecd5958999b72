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
    p99Ms?: number;
    meanMs: number;
    /** Per stage, from the edge's `server-timing` header: see splitOverhead in bench-edge.ts. */
    stagesMs?: Record<string, Pct>;
  }>;
  /** `GET /livez` client time minus the Worker's: wrangler dev's local proxying and the HTTP exchange. */
  httpFloorMs?: Pct;
  /** Turn overhead without a production label and with one (50 % canary), in the same edge, turns alternating. */
  labelResolution?: LabelResolution;
  hops: HopBreakdown;
  /** The same on SmolLM2 with the trained l0, when the model was on the machine. */
  hopsSmollm2?: HopBreakdown;
}

export interface LabelResolution {
  turnsPerSide: number;
  armsSeen: number;
  withoutLabelMs: Pct;
  withLabelMs: Pct;
  differenceP50Ms: number;
  /** The median of the pairs' differences (labelled minus not, turns sent back to back) and its 95 % interval. */
  pairedDifferenceMs?: { median: number; ci95: [number, number] };
  /** The conversation object's `object.harness` stage (choosing and loading the harness). */
  harnessStageMs: { without: Pct; with: Pct };
}

function renderLabelResolution(l: LabelResolution): string[] {
  return [
    "## Label resolution",
    "",
    `Edge overhead (as above) of ${l.turnsPerSide} turns per side, alternating in the same edge: a tenant without a`,
    "`production` label (the built-in default) against one whose `production` label has a 50 % canary",
    `(${l.armsSeen} of its 2 versions measured), on 10 conversations a side of equal lengths.`,
    "",
    "| side | overhead p50 | p95 | `object.harness` p50 | p95 |",
    "| ---- | -----------: | --: | -------------------: | --: |",
    `| no label | ${l.withoutLabelMs.p50} ms | ${l.withoutLabelMs.p95} ms | ${l.harnessStageMs.without.p50} ms | ${l.harnessStageMs.without.p95} ms |`,
    `| production + 50 % canary | ${l.withLabelMs.p50} ms | ${l.withLabelMs.p95} ms | ${l.harnessStageMs.with.p50} ms | ${l.harnessStageMs.with.p95} ms |`,
    "",
    `Label resolution adds ${l.differenceP50Ms} ms to the overhead p50 (the difference of the two p50s).`,
    ...(l.pairedDifferenceMs
      ? [
          `Turn by turn (each labelled turn minus the unlabelled one sent next to it): median ${l.pairedDifferenceMs.median} ms,`,
          `95 % interval ${l.pairedDifferenceMs.ci95[0]} to ${l.pairedDifferenceMs.ci95[1]} ms.`,
        ]
      : []),
    "",
  ];
}

export interface HopBreakdown {
  /** Absent in reports written before there were two. */
  model?: string;
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
  backToBackOverPacedMean?: number;
  /** Answer tokens per turn, mean, each side: the ratios compare like with like only when these match. */
  answerTokensMean?: { paced: number; backToBack: number };
  backToBackShareOfRouteAndSummaryWait: number;
  /** The back-to-back turns' summaries once the burst ended: deferred while it ran, none may be lost. */
  backToBackSummaries?: { ready: number; failed: number; pending: number; settledAfterMs: number };
}

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

/** The markdown half of the edge benchmark report. */
export function renderEdgeReport(r: EdgeReport): string {
  return [
    "# Edge benchmark",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    "",
    "## Edge overhead per turn against conversation length",
    "",
    "Client time of a non-streamed `POST /v1/responses` minus the route and answer time the GPU node reported",
    "(instant engine): HTTP, the Worker, the conversation Durable Object (SQLite timeline, views) and NATS. The",
    "last turns before each length are sampled, after warm-up turns on a conversation of their own (a fresh",
    "workerd compiles as it goes).",
    "",
    renderMarkdownRow([
      "conversation length (turns)",
      "sampled turns",
      "p50 ms",
      "p95 ms",
      "p99 ms",
      "mean ms",
    ]),
    renderMarkdownRow(["---:", "---:", "---:", "---:", "---:", "---:"]),
    ...r.overhead.map((o) =>
      renderMarkdownRow([o.turns, o.samples, o.p50Ms, o.p95Ms, o.p99Ms ?? "", o.meanMs]),
    ),
    "",
    ...renderStages(r.overhead),
    ...(r.httpFloorMs
      ? [
          `The \`http\` floor: \`GET /livez\` (no auth, no object, no NATS) spends p50 ${r.httpFloorMs.p50} ms, p95`,
          `${r.httpFloorMs.p95} ms outside the Worker: \`wrangler dev\`'s local proxying and the HTTP exchange.`,
          "",
        ]
      : []),
    ...(r.labelResolution ? renderLabelResolution(r.labelResolution) : []),
    ...renderHopBreakdown(r.hops),
    ...(r.hopsSmollm2 ? renderHopBreakdown(r.hopsSmollm2) : []),
    "The Macaron-V1 report gives 32 % for route + summary on its Venti model.",
    "",
  ].join("\n");
}

/** Where a turn's time goes on one model, for a paced client and a back-to-back one. */
function renderHopBreakdown(h: HopBreakdown): string[] {
  return [
    `## Hop breakdown on ${h.model ?? "the tiny model"} (${h.turns} routed turns, answers capped at 64 tokens)`,
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
    ...(h.answerTokensMean
      ? [
          `(answers of ${h.answerTokensMean.backToBack} tokens on average, against ${h.answerTokensMean.paced} paced):`,
        ]
      : []),
    `${h.backToBackOverPacedP50}× the paced p50${h.backToBackOverPacedMean === undefined ? "" : ` (mean: ${h.backToBackOverPacedMean}×)`}; route + summary wait (recorded waits plus time beyond the paced p50)`,
    `is ${pct(h.backToBackShareOfRouteAndSummaryWait)} of its time, and its time outside the answer hop`,
    `${pct(h.backToBackShareOfRouteAndSummary)}.`,
    ...(h.backToBackSummaries
      ? [
          `Its turns' summaries, which yield to its routes and answers: ${h.backToBackSummaries.ready} ready, ` +
            `${h.backToBackSummaries.failed} failed, ${h.backToBackSummaries.pending} still pending, all settled ` +
            `${h.backToBackSummaries.settledAfterMs} ms after its last answer.`,
        ]
      : []),
    "",
  ];
}

/**
 * Stage rows, one column per conversation length (p50 / p95 ms), from the edge's `server-timing` header. In
 * workerd the clock advances only at I/O: a CPU-only stage (SQLite writes, views, encoding) reads 0 and its time
 * shows in the next stage that waits on I/O.
 */
function renderStages(overhead: EdgeReport["overhead"]): string[] {
  const rows = overhead.filter((o) => o.stagesMs);
  const stages = Object.keys(rows[0]?.stagesMs ?? {});
  if (stages.length === 0) return [];
  return [
    "Where it goes, per stage (p50 / p95 ms), from the `server-timing` header the edge sends (auth = D1 key",
    "lookup, limiter = the tenant's limiter object, object = the conversation Durable Object; a hop's NATS time is",
    "its edge time minus the node's own). In workerd the clock advances only at I/O: a stage that is pure CPU",
    "(SQLite writes, views, encoding) reads 0 there and its time shows in the next stage that waits on I/O.",
    "",
    renderMarkdownRow(["stage", ...rows.map((o) => `${o.turns} turns`)]),
    renderMarkdownRow(["---", ...rows.map(() => "---:")]),
    ...stages.map((stage) =>
      renderMarkdownRow([
        stage,
        ...rows.map((o) => {
          const v = o.stagesMs?.[stage];
          return v ? `${v.p50} / ${v.p95}` : "";
        }),
      ]),
    ),
    "",
  ];
}
