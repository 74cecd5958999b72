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

/** What a bench's memory table reports of KV slots and the process, whatever else it lists. */
export interface ResidentMemory {
  kvBytesPerSlot: number;
  slotsPerAdapter: number;
  contexts: number;
  rssBeforeLoadBytes: number;
  rssAfterLoadBytes: number;
  rssAfterRunBytes: number;
}

export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The memory table's last rows, shared by the node and SmolLM2 reports: all KV slots, then the RSS samples. */
export function renderResidentMemoryRows(memory: ResidentMemory): string[] {
  return [
    renderMarkdownRow([
      `KV, ${memory.contexts} contexts × ${memory.slotsPerAdapter} slots`,
      mib(memory.kvBytesPerSlot * memory.contexts * memory.slotsPerAdapter),
    ]),
    renderMarkdownRow(["process RSS before load", mib(memory.rssBeforeLoadBytes)]),
    renderMarkdownRow(["process RSS after load", mib(memory.rssAfterLoadBytes)]),
    renderMarkdownRow(["process RSS after the run", mib(memory.rssAfterRunBytes)]),
  ];
}
