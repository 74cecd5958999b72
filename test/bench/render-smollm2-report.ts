import type { KvReuseRow } from "./measure-kv-reuse.ts";
import type { RawDecodeRun } from "./measure-raw-decode.ts";
import {
  mib,
  renderFacts,
  renderMarkdownRow,
  renderMarkdownTable,
  renderResidentMemoryRows,
  type ResidentMemory,
} from "./render-markdown-row.ts";

export interface Smollm2Measured {
  settings: Record<string, string | number>;
  speed: Array<{
    adapter: string;
    promptTokens: number;
    completionTokens: number;
    prefillTokensPerSecond: number;
    /** Requester side: tokens after the first over first delta → finish, as the edge receives them. */
    decodeTokensPerSecond: number;
    /** Engine side: the same tokens over the engine's own decode time. */
    engineDecodeTokensPerSecond: number;
    /** Requester side, cold slot: request sent → first text delta. */
    firstTokenMs: number;
  }>;
  raw: {
    /** One per adapter, run right after that adapter's node run, with the pair's ratio. */
    runs: Array<RawDecodeRun & { after: string; nodeShareOfRaw: number }>;
    decodeTokensPerSecond: number;
    nodeDecodeTokensPerSecond: number;
    /** Median over the pairs of node decode (requester side) / raw decode: the goal is ≥ 0.9. */
    nodeShareOfRaw: number;
  };
  route: { samples: number; p50Ms: number; p95Ms: number };
  firstToken: { samples: number; warmP50Ms: number; warmP95Ms: number };
  reuse: KvReuseRow[];
  /** The chat conversation again with sampled answers (temperature 0.8, fixed seed). */
  sampledReuse: KvReuseRow;
  reuseShareOfIdeal: number;
  memory: ResidentMemory & {
    baseFileBytes: number;
  };
}

/** The SmolLM2 benchmark's report: its figures, or why it was skipped. */
export type Smollm2Report = { command: string; machine: Record<string, string | number> } & (
  Smollm2Measured | { skipped: string }
);

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

/** The markdown half of the SmolLM2 benchmark report. */
export function renderSmollm2Report(r: Smollm2Report): string {
  const head = [
    "# SmolLM2-135M-Instruct on the GPU node",
    "",
    `Command: \`${r.command}\`. Machine: ${renderFacts(r.machine)}.`,
  ];
  if ("skipped" in r) return [...head, "", `**Skipped:** ${r.skipped}.`, ""].join("\n");
  return [
    ...head,
    `Settings: ${renderFacts(r.settings)}.`,
    "",
    "## Speed per adapter (greedy, fresh slot, over NATS)",
    "",
    "Decode = tokens after the first over the time from the first text delta to the finish part, as the requester",
    "receives them; engine decode = the same tokens over the engine's own decode time. First token = request sent",
    "to first text delta, cold slot (the whole prompt is prefilled).",
    "",
    ...renderMarkdownTable(
      [
        "adapter",
        "prompt tokens",
        "prefill tok/s",
        "completion tokens",
        "decode tok/s",
        "engine decode tok/s",
        "first token ms",
      ],
      r.speed.map((s) => [
        s.adapter,
        s.promptTokens,
        s.prefillTokensPerSecond,
        s.completionTokens,
        s.decodeTokensPerSecond,
        s.engineDecodeTokensPerSecond,
        s.firstTokenMs,
      ]),
    ),
    "",
    "## Against the physical limit",
    "",
    "Raw = node-llama-cpp alone (`LlamaContextSequence.evaluate`) on one sequence of the same model, same threads,",
    "same prompt, as many tokens, greedy, in the same process right after each adapter's node run, the node idle,",
    "so each pair sees the same load on a shared machine.",
    "",
    ...renderMarkdownTable(
      ["raw run after", "prompt tokens", "prefill tok/s", "completion tokens", "decode tok/s", "node / raw"],
      r.raw.runs.map((x) => [
        x.after,
        x.promptTokens,
        x.prefillTokensPerSecond,
        x.completionTokens,
        x.decodeTokensPerSecond,
        pct(x.nodeShareOfRaw),
      ]),
    ),
    "",
    `Node decode ${r.raw.nodeDecodeTokensPerSecond} tok/s, raw ${r.raw.decodeTokensPerSecond} tok/s (medians): the ` +
      `node decodes at **${pct(r.raw.nodeShareOfRaw)} of the physical limit** (median of the pairs; goal ≥ 90 %).`,
    "",
    "## Latency",
    "",
    `Route hop (requester side, over NATS), ${r.route.samples} routes: p50 ${r.route.p50Ms} ms, p95 ${r.route.p95Ms} ms.`,
    `Answer time to first token on a warm slot, ${r.firstToken.samples} conversation turns: p50 ` +
      `${r.firstToken.warmP50Ms} ms, p95 ${r.firstToken.warmP95Ms} ms.`,
    "",
    `## KV reuse over a ${r.reuse[0]?.turns ?? 0}-turn conversation`,
    "",
    "Append-only plain-text views; ideal = everything already in the slot (previous view + previous answer).",
    "",
    ...renderMarkdownTable(
      ["adapter", "prompt tokens", "cached tokens", "ideal cached", "cached / ideal"],
      r.reuse.map((x) => [
        x.adapter,
        x.promptTokens,
        x.cachedPromptTokens,
        x.idealCachedTokens,
        x.shareOfIdeal,
      ]),
    ),
    "",
    `All adapters: **${pct(r.reuseShareOfIdeal)} of the ideal** cached (goal ≥ 99.5 %). The ideal counts the last`,
    "sampled token of each answer, which llama.cpp samples without evaluating: one token a turn stays out of reach.",
    `With sampled answers (chat, temperature 0.8, seed 7): ${r.sampledReuse.cachedPromptTokens} of ` +
      `${r.sampledReuse.idealCachedTokens} ideal, **${pct(r.sampledReuse.shareOfIdeal)}**.`,
    "",
    "## Memory",
    "",
    ...renderMarkdownTable(["part", "bytes"], []),
    renderMarkdownRow(["base weights (file)", mib(r.memory.baseFileBytes)]),
    renderMarkdownRow([`KV per slot (f16, ${r.settings.contextSize} tokens)`, mib(r.memory.kvBytesPerSlot)]),
    ...renderResidentMemoryRows(r.memory),
    "",
  ].join("\n");
}
