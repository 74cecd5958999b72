import { formatCachedShare } from "./format-cached-share.ts";
import { formatRouteSource } from "./format-route-source.ts";
import type { Item } from "./item-schema.ts";
import type { TurnMol } from "../../schema/api/mol.ts";

const INDENT = "  ";

function indent(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `${INDENT}${line}`)
    .join("\n");
}

function readItemText(item: Item): string {
  return (item.content ?? [])
    .map((part) => part.text)
    .filter((text) => text !== undefined)
    .join("\n");
}

function formatMolHeader(mol: TurnMol): string[] {
  const answer = mol.usage?.answer;
  return [
    mol.label,
    formatRouteSource(mol),
    answer === undefined
      ? undefined
      : `answer ${formatCachedShare(answer.cachedPromptTokens, answer.promptTokens)}`,
    mol.summary === undefined ? undefined : `summary ${mol.summary.status}`,
  ].filter((fact) => fact !== undefined);
}

function formatItem(item: Item): string {
  const role = item.role ?? item.type;
  const header = [item.id, role];
  // A completed message is the norm; only say so when it is not.
  if (item.status !== undefined && item.status !== "completed") header.push(item.status);
  if (item.mol !== undefined) header.push(...formatMolHeader(item.mol));
  const lines = [header.join(" · ")];
  const text = readItemText(item);
  if (text !== "") lines.push(indent(text));
  const summary = item.mol?.summary?.text;
  if (summary !== undefined && summary !== "") lines.push(indent(`summary: ${summary}`));
  return lines.join("\n");
}

/** Items as a readable transcript: a header per item (id, role, mol facts), then its text, indented. */
export function formatItems(items: readonly Item[]): string {
  return items.map((item) => `${formatItem(item)}\n`).join("\n");
}
