/** One finished exchange of a benchmark conversation. */
export interface BenchExchange {
  user: string;
  answer: string;
}

/**
 * The append-only view molmesh's view builder keeps (workers/src/views): a fixed system line, then each turn's
 * lines in order; a new turn only adds to the end, so the slot's KV prefix stays valid.
 */
export function renderAppendOnlyView(
  adapter: string,
  history: readonly BenchExchange[],
  user: string,
): string {
  const past = history.map((h) => `user: ${h.user}\nassistant:${h.answer}\n`).join("");
  return `system: you are the ${adapter} specialist.\n${past}user: ${user}\nassistant:`;
}

/**
 * A deliberately naive view builder, the KV-reuse baseline: it re-renders the whole prompt every turn with a
 * system header that carries the turn count and the current time, a common way to "give the model context".
 * The tokens differ a few tokens in, so nothing after the header can come from the slot's cache.
 */
export function renderNaiveView(
  adapter: string,
  history: readonly BenchExchange[],
  user: string,
  now: Date = new Date(),
): string {
  const header = `system: you are the ${adapter} specialist. This is turn ${history.length + 1}; the time is ${now.toISOString()}.\n`;
  const past = history.map((h) => `user: ${h.user}\nassistant:${h.answer}\n`).join("");
  return `${header}${past}user: ${user}\nassistant:`;
}
