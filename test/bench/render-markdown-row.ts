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

/** A markdown table: a header, then its separator (the first column left-aligned, the figures right-aligned). */
export function renderMarkdownTable(
  headers: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
): string[] {
  const separator = headers.map((_, i) => (i === 0 ? "---" : "---:"));
  return [renderMarkdownRow(headers), renderMarkdownRow(separator), ...rows.map(renderMarkdownRow)];
}
