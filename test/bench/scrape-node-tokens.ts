/** The node's token and hop counters, all adapters (and hops, outcomes) together, from its Prometheus text. */
export interface NodeTokenCounts {
  /** Hops served, every outcome. */
  hops: number;
  /** Prompt tokens of served hops: cached + evaluated, the context each hop held when it began decoding. */
  promptTokens: number;
  completionTokens: number;
  evaluatedPromptTokens: number;
  cachedPromptTokens: number;
}

const COUNTERS: Record<keyof NodeTokenCounts, string> = {
  hops: "molmesh_hops_total",
  promptTokens: "molmesh_prompt_tokens_total",
  completionTokens: "molmesh_completion_tokens_total",
  evaluatedPromptTokens: "molmesh_evaluated_prompt_tokens_total",
  cachedPromptTokens: "molmesh_cached_prompt_tokens_total",
};

async function scrape(metricsUrl: string): Promise<(name: string) => number> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`GET ${metricsUrl}: ${response.status}`);
  const lines = (await response.text()).split("\n");
  return (name) =>
    lines
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

export async function scrapeNodeTokens(metricsUrl: string): Promise<NodeTokenCounts> {
  const total = await scrape(metricsUrl);
  return mapCounts((key) => total(COUNTERS[key]));
}

export function diffNodeTokens(after: NodeTokenCounts, before: NodeTokenCounts): NodeTokenCounts {
  return mapCounts((key) => after[key] - before[key]);
}

function mapCounts(value: (key: keyof NodeTokenCounts) => number): NodeTokenCounts {
  return {
    hops: value("hops"),
    promptTokens: value("promptTokens"),
    completionTokens: value("completionTokens"),
    evaluatedPromptTokens: value("evaluatedPromptTokens"),
    cachedPromptTokens: value("cachedPromptTokens"),
  };
}

/** Resolves once the node runs and queues no hop (the summaries a level leaves behind have ended). */
export async function waitForIdleNode(metricsUrl: string, timeoutMs = 300_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const total = await scrape(metricsUrl);
    if (total("molmesh_hops_in_flight") === 0 && total("molmesh_admission_queued") === 0) return;
    if (performance.now() > deadline) throw new Error(`node still busy after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
