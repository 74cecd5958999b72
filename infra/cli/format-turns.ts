import type { MeshResponse, Item, Conversation } from "./mesh-client.ts";
import type { TurnMol } from "../../schema/api/mol.ts";

/** `150/200 cached (75%)`: the count says how big the prompt was, the share says how well the KV was reused. */
export function formatCachedShare(cached: number, total: number): string {
  const share = total > 0 ? `${Math.round((cached / total) * 100)}%` : "n/a";
  return `${cached}/${total} cached (${share})`;
}

/** `router`, `forced`, or `fallback(overloaded→previous)`: why this specialist answered. */
export function formatRouteSource(mol: TurnMol): string {
  if (mol.source !== "fallback" || mol.fallback === undefined) return mol.source;
  return `fallback(${mol.fallback.code}→${mol.fallback.to})`;
}

/** Revisions are content fingerprints; a prefix tells two apart at a glance. */
const REVISION_CHARS = 12;

function formatMs(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : `${Math.round(ms)}ms`;
}

function formatMolFacts(mol: TurnMol): string[] {
  const timings = mol.timings;
  const answer = mol.usage.answer;
  return [
    mol.label,
    formatRouteSource(mol),
    mol.route?.confidence === undefined ? undefined : `p ${mol.route.confidence.toFixed(2)}`,
    mol.route?.lowConfidenceLabel === undefined
      ? undefined
      : `kept previous over ${mol.route.lowConfidenceLabel}`,
    mol.revision === undefined ? undefined : `rev ${mol.revision.slice(0, REVISION_CHARS)}`,
    timings.routeMs === undefined ? undefined : `route ${formatMs(timings.routeMs)}`,
    timings.answerFirstTokenMs === undefined
      ? undefined
      : `first token ${formatMs(timings.answerFirstTokenMs)}`,
    timings.answerTotalMs === undefined ? undefined : `answer ${formatMs(timings.answerTotalMs)}`,
    answer === undefined
      ? undefined
      : `answer ${formatCachedShare(answer.cachedPromptTokens, answer.promptTokens)}`,
  ].filter((fact) => fact !== undefined);
}

/**
 * One line per turn, e.g.
 * `── coding · router · p 0.97 · rev 3f9a · route 5ms · first token 9ms · answer 40ms · answer 150/200 cached (75%) · turn 240/300 cached (80%)`.
 */
export function formatStatusLine(response: MeshResponse): string {
  const facts = response.mol === undefined ? ["no mol facts"] : formatMolFacts(response.mol);
  const usage = response.usage;
  if (usage !== undefined && usage !== null) {
    facts.push(
      `turn ${formatCachedShare(usage.input_tokens_details?.cached_tokens ?? 0, usage.input_tokens)}`,
    );
  }
  if (response.status === "incomplete") {
    facts.push(`incomplete (${response.incomplete_details?.reason ?? "unknown reason"})`);
  }
  return `── ${facts.join(" · ")}`;
}

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
  const answer = mol.usage.answer;
  return [
    mol.label,
    formatRouteSource(mol),
    answer === undefined
      ? undefined
      : `answer ${formatCachedShare(answer.cachedPromptTokens, answer.promptTokens)}`,
    `summary ${mol.summary.status}`,
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
  const summary = item.mol?.summary.text;
  if (summary !== undefined && summary !== "") lines.push(indent(`summary: ${summary}`));
  return lines.join("\n");
}

/** Items as a readable transcript: a header per item (id, role, mol facts), then its text, indented. */
export function formatItems(items: readonly Item[]): string {
  return items.map((item) => `${formatItem(item)}\n`).join("\n");
}

/** UTC and to the second: the same on every machine, and sortable. */
function formatCreatedAt(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function formatMetadata(metadata: Conversation["metadata"]): string {
  return Object.entries(metadata ?? {})
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(" ");
}

/** One line per conversation: `conv_… 2026-04-26T10:00:00Z project="demo"`. */
export function formatConversations(conversations: readonly Conversation[]): string {
  return conversations
    .map((conversation) =>
      [conversation.id, formatCreatedAt(conversation.created_at), formatMetadata(conversation.metadata)]
        .filter((column) => column !== "")
        .join("  "),
    )
    .map((line) => `${line}\n`)
    .join("");
}
