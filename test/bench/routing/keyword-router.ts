/**
 * The keyword baseline: what a router without a model does. Each label has cue words; the label with the most
 * cues in the message wins, chat when none match. Its confidence is the winner's share of the cues (0.25 when
 * nothing matched), so it can be compared on calibration too.
 */
const CUES: Record<string, readonly RegExp[]> = {
  coding: [
    /\b(code|function|bug|error|exception|stack ?trace|compile|regex|sql|query|python|javascript|typescript|java|rust|golang|c\+\+|bash|shell|script|git|docker|kubernetes|yaml|json|api|class|method|variable|debug|refactor|unit test|npm|pip|css|html|react|segfault|null|undefined|traceback)\b/i,
    /[`{};]|=>|\(\)/,
  ],
  agent: [
    /\b(book|schedule|remind|send|email|e-mail|forward|cancel|order|buy|pay|reserve|set (an|a|the)|turn (on|off)|add .* to (my|the)|move|rename|back ?up|upload|download|file (an|a)|open a ticket|text|call|invite|calendar|track|unsubscribe|post|reply)\b/i,
  ],
  genui: [
    /\b(dashboard|chart|graph|form|table|widget|card|ui|interface|layout|screen|page|button|slider|toggle|kanban|board|grid|timer|stopwatch|calculator|mockup|panel|display|render|visuali[sz]e|show me a|progress (bar|ring))\b/i,
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
