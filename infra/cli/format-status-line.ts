import { formatCachedShare } from "./format-cached-share.ts";
import { formatRouteSource } from "./format-route-source.ts";
import type { TurnMol } from "../../schema/api/mol.ts";
import type { MeshResponse } from "./response-schema.ts";

/** Revisions are content fingerprints; a prefix tells two apart at a glance. */
const REVISION_CHARS = 12;

function formatMs(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : `${Math.round(ms)}ms`;
}

function formatMolFacts(mol: TurnMol): string[] {
  const timings = mol.timings ?? {};
  const answer = mol.usage?.answer;
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
 * `── coding · router · rev 3f9a · route 5ms · first token 9ms · answer 40ms · answer 150/200 cached (75%) · turn 240/300 cached (80%)`.
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
