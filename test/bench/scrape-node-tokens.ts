/** The node's token counters, all adapters together, from its Prometheus text. */
export interface NodeTokenCounts {
  completionTokens: number;
  evaluatedPromptTokens: number;
  cachedPromptTokens: number;
}

const COUNTERS: Record<keyof NodeTokenCounts, string> = {
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
  return {
    completionTokens: total(COUNTERS.completionTokens),
    evaluatedPromptTokens: total(COUNTERS.evaluatedPromptTokens),
    cachedPromptTokens: total(COUNTERS.cachedPromptTokens),
  };
}

export function diffNodeTokens(after: NodeTokenCounts, before: NodeTokenCounts): NodeTokenCounts {
  return {
    completionTokens: after.completionTokens - before.completionTokens,
    evaluatedPromptTokens: after.evaluatedPromptTokens - before.evaluatedPromptTokens,
    cachedPromptTokens: after.cachedPromptTokens - before.cachedPromptTokens,
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
