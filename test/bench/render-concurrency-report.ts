import type { ConcurrencyLevelResult } from "./measure-concurrency-level.ts";
import { renderFacts, renderMarkdownRow } from "./render-markdown-row.ts";
import type { NodeTokenCounts } from "./scrape-node-tokens.ts";
import { round } from "./stats.ts";

export interface ConcurrencyLevelReport extends ConcurrencyLevelResult {
  /** What the node's counters moved by during the level's wall time (all hops: route, answer, summary). */
  node: NodeTokenCounts;
  /**
   * The counters again once the node went idle after the level (its last turns' summaries ended), and the
   * seconds that took past the level's wall time: all the work the level's turns made the node do.
   */
  drained: NodeTokenCounts & { seconds: number; nodeTokensPerSecond: number };
  /** Tokens the node generated, all hops, per wall second. */
  nodeTokensPerSecond: number;
  /** Answer tokens the clients received per wall second. */
  answerTokensPerSecond: number;
  /**
   * node-llama-cpp alone after the mesh, min(concurrency, the node's admission limit) sequences, each first holding
   * `contextTokens` (the level's prompt tokens per hop, drained counters), then decoding together; and the
   * rate at which those sequences' prompts were evaluated, all at once.
   */
  rawAtContext: {
    sequences: number;
    contextTokens: number;
    decodeTokensPerSecond: number;
    prefillTokensPerSecond: number;
  };
  /**
   * Seconds node-llama-cpp alone would need for the level's work at those rates (tokens decoded / raw decode rate
   * + prompt tokens evaluated / raw prefill rate, drained counters) over the level's wall + drain seconds: the
   * share of the machine's physical limit the mesh reached for the work it really did.
   */
  workEquivalent: number;
}

export interface ConcurrencyReport {
  command: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number>;
  /** node-llama-cpp alone, `sequences` decoding at once in one context, before and after the mesh levels. */
  raw: {
    sequences: number;
    decodeTokensPerSequence: number;
    before: number;
    after: number;
    tokensPerSecond: number;
  };
  levels: ConcurrencyLevelReport[];
  /** Why the run ended before its last level, if it did. */
  stoppedAt?: string;
}

/** The markdown half of the concurrency benchmark report. */
export function renderConcurrencyReport(r: ConcurrencyReport): string {
  const errors = (level: ConcurrencyLevelResult) =>
    [
      Object.entries(level.errors)
        .map(([key, count]) => `${count} × ${key}`)
        .join(", ") || "none",
      ...(level.warmupFailed > 0 ? [` (and ${level.warmupFailed} failed warm-up turns)`] : []),
    ].join("");
  const percent = (share: number) => `${round(100 * share, 1)} %`;
  const ratio = (tokensPerSecond: number, raw = r.raw.tokensPerSecond) => percent(tokensPerSecond / raw);
  return [
    "# Concurrency benchmark",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
    `Settings: ${renderFacts(r.settings)}.`,
    "",
    "Through the whole local mesh: HTTP to the edge in `wrangler dev` (Worker, conversation Durable Objects), NATS,",
    "one GPU node process running llama.cpp. Each client owns a conversation and sends its next message the moment",
    "an answer ends (non-streamed `POST /v1/responses`: route, answer; the summary runs in the background). Latency",
    "counts successful turns only; failed turns are not retried. Before a level's measured turns each client makes",
    `${r.settings.warmupTurnsPerClient ?? 0} unmeasured turn(s) and the node goes idle: a conversation's first turn prefills its views from`,
    "empty KV slots, the measured ones are the steady state (their prefill is the column of its own).",
    "The queue bound: a conversation holds at most two",
    "hops at a node (its route or answer, and the previous turn's summary), so a node admitting",
    `${r.settings.nodeMaxConcurrentHops} and queueing ${r.settings.nodeMaxQueuedHops} hops refuses nothing below`,
    `${(Number(r.settings.nodeMaxConcurrentHops) + Number(r.settings.nodeMaxQueuedHops)) / 2} conversations; past it, \`503 overloaded\` with \`retry-after\`.`,
    "",
    `Physical limit, in the same run: node-llama-cpp alone, ${r.raw.sequences} sequences of one context decoding`,
    `${r.raw.decodeTokensPerSequence} tokens each at once, same model and threads: ${r.raw.before} tokens/s before the`,
    `mesh levels, ${r.raw.after} after; mean ${r.raw.tokensPerSecond}. "node tok/s" counts every token the node`,
    "generated (route, answer, summary); prefill (evaluated prompt tokens) is work on top that the raw limit leaves out.",
    "",
    "Those raw sequences hold a ~60-token prompt, while a node's hops decode with their whole view in context, and",
    "decode slows as the attended context grows. So, after the mesh, each level gets its own limit: as many sequences",
    "as the level can batch (min(concurrency, admission limit)), each first holding the level's mean prompt tokens",
    `per hop ("ctx/hop": the node's prompt tokens over its hops), then decoding ${r.raw.decodeTokensPerSequence} tokens together ("raw at ctx").`,
    '"of raw" is node tok/s against the short-context limit above, "of raw at ctx" against the level\'s own.',
    '"raw prefill" is the rate at which those raw sequences\' prompts were evaluated, all at once. "work-equiv" is',
    "the time node-llama-cpp alone would take for the level's work at those two rates (tokens the node generated /",
    "raw at ctx + prompt tokens it evaluated / raw prefill) over the level's wall + drain time: the share of this",
    "CPU's physical limit the mesh reached for the work it really did (1 = no overhead, no idle threads).",
    '"drain s": how long after the last answer the node took to go idle (the last turns\' summaries); "drained tok/s"',
    "is every token the node generated for the level, those summaries included, over wall + drain seconds. ctx/hop",
    'and work-equiv count the drained work; node tok/s and the two "of raw" columns count the wall time only.',
    "",
    renderMarkdownRow([
      "concurrency",
      "turns",
      "ok",
      "errors",
      "turns/s",
      "p50 ms",
      "p95 ms",
      "node tok/s",
      "of raw",
      "ctx/hop",
      "raw at ctx tok/s",
      "of raw at ctx",
      "raw prefill tok/s",
      "work-equiv",
      "drain s",
      "drained tok/s",
      "answer tok/s",
      "prefill tok",
      "wall s",
    ]),
    // Every column right-aligned but the errors' text.
    renderMarkdownRow(Array.from({ length: 19 }, (_, i) => (i === 3 ? "---" : "---:"))),
    ...r.levels.map((l) =>
      renderMarkdownRow([
        l.concurrency,
        l.turns,
        l.okTurns,
        errors(l),
        l.turnsPerSecond,
        l.p50Ms,
        l.p95Ms,
        l.nodeTokensPerSecond,
        ratio(l.nodeTokensPerSecond),
        l.rawAtContext.contextTokens,
        l.rawAtContext.decodeTokensPerSecond,
        ratio(l.nodeTokensPerSecond, l.rawAtContext.decodeTokensPerSecond),
        l.rawAtContext.prefillTokensPerSecond,
        percent(l.workEquivalent),
        l.drained.seconds,
        l.drained.nodeTokensPerSecond,
        l.answerTokensPerSecond,
        l.node.evaluatedPromptTokens,
        l.wallSeconds,
      ]),
    ),
    "",
    ...(r.stoppedAt === undefined ? [] : [`The run stopped before its last level: ${r.stoppedAt}`, ""]),
  ].join("\n");
}
