/**
 * The keyword baseline: what a router without a model does. Each label has cue words; the label with the most
 * cues in the message wins, chat when none match. Its confidence is the winner's share of the cues (0.25 when
 * nothing matched), so it can be compared on calibration too.
 */
// Generic cue words, written from LABELLING.md's definitions before any eval; not tuned on dev, test or ood.
const CUES: Record<string, readonly RegExp[]> = {
  coding: [
    /\b(code|function|bug|error|exception|compile|regex|sql|query|python|javascript|typescript|java|rust|bash|shell|script|git|docker|api|class|method|variable|debug|refactor|test|css|html)\b/i,
    /[`{};]|=>|\(\)/,
  ],
  agent: [
    /\b(book|schedule|remind|send|email|forward|cancel|order|buy|pay|reserve|calendar|invite|reply|upload|download)\b/i,
  ],
  genui: [
    /\b(dashboard|chart|graph|form|table|widget|card|ui|interface|layout|screen|page|button|display|render)\b/i,
  ],
};

export function routeByKeywords(message: string): { label: string; confidence: number } {
  const scores = Object.entries(CUES).map(([label, cues]) => ({
    label,
    hits: cues.reduce(
      (n, cue) => n + (message.match(new RegExp(cue.source, cue.flags + "g"))?.length ?? 0),
      0,
    ),
  }));
  const total = scores.reduce((s, x) => s + x.hits, 0);
  if (total === 0) return { label: "chat", confidence: 0.25 };
  const best = scores.reduce((a, b) => (b.hits > a.hits ? b : a));
  return { label: best.label, confidence: best.hits / total };
}
