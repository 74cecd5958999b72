const ESCAPES: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const FIRST_PRINTABLE = 0x20;
const DELETE = 0x7f;

function escapeGbnfChar(char: string): string {
  const named = ESCAPES[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  // Raw control bytes would end or corrupt the literal; GBNF reads \xHH.
  if (code < FIRST_PRINTABLE || code === DELETE) return `\\x${code.toString(16).padStart(2, "0")}`;
  return char;
}

/** GBNF that accepts exactly one of `choices`: `root ::= "a" | "b"`. */
export function buildChoiceGrammar(choices: readonly string[]): string {
  if (choices.length === 0) throw new RangeError("a choice constraint needs at least one choice");
  const literals = choices.map((choice) => `"${Array.from(choice, escapeGbnfChar).join("")}"`);
  return `root ::= ${literals.join(" | ")}`;
}
