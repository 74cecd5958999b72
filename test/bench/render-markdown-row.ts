/** One row of a markdown table. */
export function renderMarkdownRow(cells: ReadonlyArray<string | number>): string {
  return `| ${cells.join(" | ")} |`;
}

/** `key value, key value` for a report's machine and settings lines. */
export function renderFacts(facts: Record<string, string | number>): string {
  return Object.entries(facts)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}
