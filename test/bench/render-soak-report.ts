import type { SoakReconciliation } from "./reconcile-soak.ts";
import { renderFacts, renderMarkdownTable } from "./render-markdown-row.ts";

export interface SoakChaosEvent {
  /** Turns finished when it happened. */
  atTurn: number;
  /** Seconds since the soak began. */
  atS: number;
  what: string;
}

export interface SoakReport {
  command: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number>;
  seconds: number;
  turnsPerSecond: number;
  turns: {
    driven: number;
    acknowledged: number;
    failed: number;
    /** Acknowledged in the end after one or more refused or cut attempts (same Idempotency-Key). */
    retried: number;
    /** Answers continued on another node after theirs died (`mol.takeovers`). */
    takenOver: number;
    streamAnomalies: number;
  };
  /** Client time of acknowledged turns, request to terminal event, retries included. */
  latencyMs: { p50: number; p99: number; max: number };
  /** Why turns ended unacknowledged (their last attempt). */
  errorsByKind: Record<string, number>;
  /** Attempts refused or cut that a retry with the same key then got past (or tried to). */
  retriedErrorsByKind: Record<string, number>;
  conversationErrors: Record<string, number>;
  /** The slowest turns and the unacknowledged ones, with when they ended, to line them up with the faults. */
  slowest: SoakTurnLine[];
  unacknowledged: SoakTurnLine[];
  anomalyExamples: string[];
  chaos: SoakChaosEvent[];
  reconciliation: SoakReconciliation;
}

export interface SoakTurnLine {
  endedAtS: number;
  ms: number;
  outcome: string;
  attempts: string;
}

const renderTurnLines = (lines: readonly SoakTurnLine[]) =>
  renderMarkdownTable(
    ["ended at s", "ms", "outcome", "attempt errors"],
    lines.map((l) => [l.endedAtS, l.ms, l.outcome, l.attempts]),
  );

const renderCounts = (counts: Record<string, number>) =>
  Object.keys(counts).length === 0
    ? ["none"]
    : renderMarkdownTable(
        ["kind", "count"],
        Object.entries(counts).map(([kind, n]) => [`\`${kind}\``, n]),
      );

/** The markdown half of the soak report. */
export function renderSoakReport(r: SoakReport): string {
  const c = r.reconciliation;
  const clean = c.lost + c.duplicated + c.textMismatch + c.orderViolations + c.responseMismatch === 0;
  return [
    "# Soak: node kills and a nats-server restart under load",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    `Settings: ${renderFacts(r.settings)}.`,
    "",
    "Streamed turns through the edge in `wrangler dev`, GPU node processes on a scripted engine (the soak tests the",
    "mesh's fault handling, not a model), each client with an Idempotency-Key per turn and retries of refused or cut",
    "requests under the same key. Afterwards every acknowledged response (`response.completed`) is reconciled",
    "against `GET /v1/conversations/{id}/items` and `GET /v1/responses/{id}`.",
    "",
    `**${clean ? "0 lost, 0 duplicated" : `${c.lost} lost, ${c.duplicated} duplicated`}**: ${r.turns.driven} turns in ${r.seconds} s (${r.turnsPerSecond} turns/s).`,
    "",
    ...renderMarkdownTable(
      ["turns", "count"],
      [
        ["driven", r.turns.driven],
        ["acknowledged", r.turns.acknowledged],
        ["unacknowledged (errors below)", r.turns.failed],
        ["acknowledged after a retry", r.turns.retried],
        ["continued on another node", r.turns.takenOver],
        ["stream contract breaks", r.turns.streamAnomalies],
      ],
    ),
    "",
    ...renderMarkdownTable(
      ["client time of acknowledged turns", "ms"],
      [
        ["p50", r.latencyMs.p50],
        ["p99", r.latencyMs.p99],
        ["max", r.latencyMs.max],
      ],
    ),
    "",
    "## Reconciliation",
    "",
    ...renderMarkdownTable(
      ["check", "count"],
      [
        ["conversations", c.conversations],
        ["acknowledged responses", c.acknowledged],
        ["lost (acknowledged, not stored)", c.lost],
        ["duplicated (listed twice, or no client turn's)", c.duplicated],
        ["stored text differs from the client's", c.textMismatch],
        ["conversations out of the client's order", c.orderViolations],
        ["`GET /v1/responses/{id}` differs", c.responseMismatch],
        ["failed at the client, answer stored", c.storedButFailed],
      ],
    ),
    "",
    ...(c.examples.length > 0 ? ["First disagreements:", "", ...c.examples.map((e) => `- ${e}`), ""] : []),
    "## Errors by kind",
    "",
    "Unacknowledged turns, by their last attempt:",
    "",
    ...renderCounts(r.errorsByKind),
    "",
    "Attempts refused or cut, then retried with the same key:",
    "",
    ...renderCounts(r.retriedErrorsByKind),
    "",
    ...(Object.keys(r.conversationErrors).length > 0
      ? ["Conversation creation errors:", "", ...renderCounts(r.conversationErrors), ""]
      : []),
    ...(r.anomalyExamples.length > 0
      ? ["Stream contract breaks:", "", ...r.anomalyExamples.map((e) => `- ${e}`), ""]
      : []),
    "## Faults injected",
    "",
    ...renderMarkdownTable(
      ["after turn", "at s", "fault"],
      r.chaos.map((e) => [e.atTurn, e.atS, e.what]),
    ),
    "",
    "Slowest turns:",
    "",
    ...renderTurnLines(r.slowest),
    "",
    ...(r.unacknowledged.length > 0
      ? ["Unacknowledged turns (first 20):", "", ...renderTurnLines(r.unacknowledged), ""]
      : []),
  ].join("\n");
}
