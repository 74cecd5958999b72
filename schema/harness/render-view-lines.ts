import type { HarnessDocument } from "./harness-settings.ts";
import { clipWithMark, truncateCodePoints } from "./utf8.ts";

/**
 * The lines views are made of. Each appended piece starts with a template and ends with `lineEnd`, so a
 * hop's prompt (view + cue) is a byte-prefix of the view once the hop's result is appended.
 */
export function renderSystemLine(harness: HarnessDocument, text: string): string {
  const { systemPrefix, systemEnd, lineEnd } = harness.templates;
  return systemPrefix + text + (systemEnd ?? lineEnd);
}

/** `maxChars` null keeps the whole message (the API has already bounded its bytes). */
export function renderUserLine(harness: HarnessDocument, text: string, maxChars: number | null): string {
  const { userPrefix, userEnd, lineEnd, clippedMark } = harness.templates;
  const kept = maxChars === null ? text : truncateCodePoints(text, maxChars, clippedMark);
  return userPrefix + kept + (userEnd ?? lineEnd);
}

export function renderRouteLine(harness: HarnessDocument, label: string): string {
  return harness.templates.routeCue + label + harness.templates.lineEnd;
}

/**
 * The router view's header: its system line, then each exemplar as a user line and its route line, rendered as a
 * conversation's turns are (user text clipped to `maxUserMessageChars` as there).
 */
export function renderRouterHeader(harness: HarnessDocument): string {
  const { router } = harness;
  const exemplars = (router.exemplars ?? []).map(
    (exemplar) =>
      renderUserLine(harness, exemplar.text, router.maxUserMessageChars) +
      renderRouteLine(harness, exemplar.label),
  );
  return renderSystemLine(harness, router.systemPrompt) + exemplars.join("");
}

/** What every router view of a harness starts with: its header and the first user line's opening. */
export function renderRouterViewOpening(harness: HarnessDocument): string {
  return renderRouterHeader(harness) + harness.templates.userPrefix;
}

/**
 * What the router's view holds right after a route line's label: the line's end, then the next turn's user
 * line opening (the router's view is only user and route lines). Known before the next message is, so the
 * node can evaluate it ahead of the next route hop (`afterLabel` of the route request).
 */
export function renderAfterRouteLabel(harness: HarnessDocument): string {
  return harness.templates.lineEnd + harness.templates.userPrefix;
}

/** Starts with the assistant cue the answer prompt ended with; the text is clipped to `maxBytes`. */
export function renderAnswerLine(harness: HarnessDocument, text: string, maxBytes: number): string {
  const { assistantCue, lineEnd, clippedMark } = harness.templates;
  return assistantCue + clipWithMark(text, maxBytes, clippedMark) + lineEnd;
}

/** How one specialist's turn appears to the others. */
export function renderSummaryLine(
  harness: HarnessDocument,
  label: string,
  text: string,
  maxBytes: number,
): string {
  const { summaryLine, lineEnd, clippedMark } = harness.templates;
  const clipped = clipWithMark(text, maxBytes, clippedMark);
  // Function replacers: `$` in a label or summary must stay literal.
  return summaryLine.replace("{label}", () => label).replace("{text}", () => clipped) + lineEnd;
}

/** Marks an interim line: the answer's opening, standing in for a summary that had not landed in time. */
export const INTERIM_NOTE = "(opening of the answer) ";

/**
 * How a specialist's turn appears to the others when its summary had not landed as the next turn began (the
 * `interim` summary wait): a summary line of the note and the answer's opening, clipped to `maxBytes` in all.
 */
export function renderInterimLine(
  harness: HarnessDocument,
  label: string,
  answerText: string,
  maxBytes: number,
): string {
  return renderSummaryLine(harness, label, INTERIM_NOTE + answerText, maxBytes);
}

/** What the summary prompt adds after the specialist's view. */
export function renderSummarySuffix(harness: HarnessDocument, instruction: string): string {
  return renderSystemLine(harness, instruction) + harness.templates.summaryCue;
}
