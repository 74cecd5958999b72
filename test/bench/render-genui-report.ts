/** The genui bench's outcomes and its markdown figure (bench-genui.ts runs it). */

export interface Outcome {
  prompt: string;
  compiles: boolean;
  valid: boolean;
  renders: boolean;
  findings: string;
  answerChars: number;
  /** The answer as the model wrote it, for reading the failures. */
  answer: string;
  shot?: string;
  renderError?: string;
}

export const count = (outcomes: Outcome[], key: "compiles" | "valid" | "renders") =>
  outcomes.filter((o) => o[key]).length;
export const share = (outcomes: Outcome[], key: "compiles" | "valid" | "renders") =>
  `${count(outcomes, key)}/${outcomes.length} (${((100 * count(outcomes, key)) / Math.max(1, outcomes.length)).toFixed(0)} %)`;

export const gridFile = (variant: string) => `genui-grid-${variant}.png`;

export function renderGenuiReport(
  results: { variant: { name: string; about: string }; outcomes: Outcome[] }[],
  command: string,
  settings: { contextTokens: number; maxTokens: number },
) {
  const lines = [
    "## GenUI: SmolLM2-135M answers that compile, pass the checks and render (UI4A-style)",
    "",
    `Command: \`${command}\`. Each prompt of \`test/bench/genui-prompts.json\` goes once to \`mol:genui\` (the bare`,
    `SmolLM2-135M-Instruct Q4_1 base, ChatML views from the edge, ${settings.contextTokens} context tokens, max ${settings.maxTokens} answer`,
    "tokens, greedy or sampled as the variant says) through a real GPU node and the edge in workerd; the edge",
    "validates and stores the component, Debian Chromium opens its render link (sandbox origin, SES frame) and counts",
    "it as rendered when the frame reports ready, no error, and non-empty content. Stages are cumulative: a",
    "component only renders if it passed the checks. Generation runs on the CPU of a shared 2-core machine.",
    "",
    "| variant | harness | compiles | passes checks | renders in Chromium |",
    "| --- | --- | --- | --- | --- |",
    ...results.map(
      ({ variant, outcomes }) =>
        `| ${variant.name} | ${variant.about} | ${share(outcomes, "compiles")} | ${share(outcomes, "valid")} | ${share(outcomes, "renders")} |`,
    ),
    "",
  ];
  for (const { variant, outcomes } of results) {
    const rules = new Map<string, number>();
    for (const o of outcomes.filter((x) => !x.valid)) {
      const rule = o.findings.split(" ")[0] ?? "?";
      rules.set(rule, (rules.get(rule) ?? 0) + 1);
    }
    lines.push(
      `**${variant.name}** — first finding of the rejected answers: ${[...rules].map(([r, n]) => `${r} ×${n}`).join(", ") || "none"}.`,
      "",
    );
    const unrendered = outcomes.filter((o) => o.valid && !o.renders);
    if (unrendered.length > 0)
      lines.push(
        `Passed the checks but did not render: ${unrendered.map((o) => `${o.prompt} (${o.renderError ?? "?"})`).join("; ")}.`,
        "",
      );
    const shots = outcomes.filter((o) => o.shot);
    if (shots.length > 0)
      lines.push(
        `![the ${shots.length} components of ${variant.name} that rendered](${gridFile(variant.name)})`,
        "",
        `Left to right, top to bottom: ${shots.map((o) => o.prompt).join("; ")}.`,
        "",
      );
  }
  return lines.join("\n");
}
