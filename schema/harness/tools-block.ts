import { TOOL_CALL_MARKER } from "../tools/tool-call-text.ts";
import { canonicalizeJson } from "./content-hash.ts";
import type { HarnessDocument } from "./harness-settings.ts";
import { renderSystemLine } from "./render-view-lines.ts";

/** A tool as a view shows it; `parameters` is the JSON schema the API accepted. */
export interface ViewTool {
  name: string;
  description?: string | undefined;
  parameters: Record<string, unknown>;
}

/**
 * The text of the tools block: how to call (the language the engine's grammar enforces, see
 * schema/tools/tool-call-text.ts), then one canonical JSON line per tool, sorted by name. Equal tool sets
 * give equal bytes whatever order or key order they came in, so re-sending the same tools changes nothing.
 */
export function describeTools(tools: readonly ViewTool[]): string {
  if (tools.length === 0) return "tools: none; answer in plain text.";
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = sorted.map((tool) =>
    canonicalizeJson({ name: tool.name, description: tool.description, parameters: tool.parameters }),
  );
  return [
    `tools: answer in plain text, or call a tool: ${TOOL_CALL_MARKER}{"name": "<tool>", "arguments": {…}}` +
      " (several calls: a JSON array of such objects). The tools:",
    ...lines,
  ].join("\n");
}

/**
 * The tools block as a system line. It is appended to the views when tools first appear or change (a
 * `tools_changed` event), never written into the view's start, so the prefix the engine holds in KV stays.
 */
export function renderToolsBlock(harness: HarnessDocument, tools: readonly ViewTool[]): string {
  return renderSystemLine(harness, describeTools(tools));
}

/** Whether a request's tools differ from the ones the views last showed (so a `tools_changed` is due). */
export function toolsChanged(previous: readonly ViewTool[] | undefined, next: readonly ViewTool[]): boolean {
  return previous === undefined ? next.length > 0 : describeTools(previous) !== describeTools(next);
}
