/** GBNF that admits exactly one of `choices` and nothing else (llama.cpp / llama-server `grammar`). */
export function buildChoiceGrammar(choices: readonly string[]): string {
  if (choices.length === 0) throw new TypeError("a choice grammar needs at least one choice");
  return `root ::= ${choices.map(toGbnfLiteral).join(" | ")}`;
}

function toGbnfLiteral(value: string): string {
  const escaped = value.replace(
    /[\\"\n\r\t]/g,
    (c) => ({ "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t" })[c] ?? c,
  );
  return `"${escaped}"`;
}
