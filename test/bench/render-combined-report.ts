import type { BenchPlot } from "./render-bench-plots.ts";
import { renderFacts } from "./render-markdown-row.ts";

export interface BenchSection {
  name: string;
  seconds: number;
  /** The benchmark's own markdown report (its `<name>.md`), or null when it failed. */
  markdown: string | null;
  plots: BenchPlot[];
  failure: string | null;
}

/** REPORT.md: every benchmark's section one heading level down, its plots under it, failures stated. */
export function renderCombinedReport(o: {
  command: string;
  machine: Record<string, string | number>;
  sections: readonly BenchSection[];
  /** Reports of benchmarks this run does not run (the soak), linked when their files are in the results. */
  linked?: ReadonlyArray<{ file: string; title: string; command: string }>;
}): string {
  const lines = [
    "# molmesh benchmarks",
    "",
    `Produced by \`${o.command}\`, which runs each benchmark below in its own process, one after another, on the`,
    "local mesh (nats-server, GPU node processes on the generated tiny model, the edge in `wrangler dev`; the",
    "SmolLM2 section on SmolLM2-135M-Instruct when its file is on the machine). Each section names the command",
    "that reproduces it on its own and the machine facts it was measured with.",
    "",
    `Runner machine: ${renderFacts(o.machine)}. It is a shared 2-core box: other work (builds, tests, other`,
    "benchmarks) may have run at the same time, so latencies are noisier and slower than on a quiet machine; the",
    "token counts (KV reuse, placement) do not depend on it.",
    "",
    "| benchmark | time | result |",
    "| --- | ---: | --- |",
    ...o.sections.map(
      (s) => `| ${s.name} | ${Math.round(s.seconds)} s | ${s.failure ? "**failed**" : "ok"} |`,
    ),
    "",
    ...(o.linked ?? []).flatMap((l) => [
      `${l.title}: [${l.file}](${l.file}), from \`${l.command}\`, which this run does not run.`,
      "",
    ]),
  ];
  for (const section of o.sections) {
    if (section.markdown) lines.push(section.markdown.replace(/^(#+) /gm, "#$1 ").trimEnd(), "");
    else lines.push(`## ${section.name}`, "");
    if (section.failure) lines.push(`**Failed:** ${section.failure}`, "");
    for (const p of section.plots) lines.push(`![${p.title}](${p.file})`, "");
  }
  return lines.join("\n");
}
