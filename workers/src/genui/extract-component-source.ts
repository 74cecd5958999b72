/**
 * The component module in a genui answer. The contract asks for the module alone, but models (small ones above
 * all) often wrap it in a markdown fence or add a sentence around it: the first fenced block wins when there is
 * one (an unclosed fence runs to the end, as a `length` stop leaves it); otherwise the text from the first
 * `import`/`export` line on. What is left is the validator's to judge, so extraction never rejects anything.
 */
const FENCE = /```[ \t]*(?:jsx|tsx|js|javascript|ts|typescript|react)?[ \t]*\r?\n([\s\S]*?)(?:```|$)/i;
const MODULE_START = /^[ \t]*(?:import|export)\b/m;

export function extractComponentSource(answer: string): string {
  const fenced = FENCE.exec(answer);
  if (fenced?.[1] !== undefined) return fenced[1].trim();
  const start = MODULE_START.exec(answer);
  return (start ? answer.slice(start.index) : answer).trim();
}
