/**
 * `npm run bench:genui`: the UI4A-style figure. Every prompt of genui-prompts.json goes to the real genui
 * specialist (SmolLM2-135M-Instruct on a real GPU node, views in ChatML built by the edge) through the real edge,
 * once per harness variant; the edge validates the answer and stores a valid component (`mol.genui`), then Debian
 * Chromium opens its render link. Counted per answer: compiles (sucrase + acorn accept the extracted module),
 * passes the checks (the edge's verdict), renders (the frame says ready, reports no error and shows something).
 * Slow on CPU (minutes): part of no CI run.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import type { MolGenui } from "../../schema/api/mol.ts";
import { extractComponentSource } from "../../workers/src/genui/extract-component-source.ts";
import { validateComponent } from "../../workers/src/genui/validate-component.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { REAL_MODEL, REAL_MODEL_PATH } from "../harness/real-model.ts";
import { startNatsServer } from "../harness/start-nats-server.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { spawnBenchNode } from "./spawn-bench-node.ts";
import { GENUI_EXEMPLAR } from "../../schema/harness/genui-contract-prompt.ts";

const KEY = "sk-bench-genui-0123456789abcdef";
const LIMIT = Number(process.env.MOL_BENCH_GENUI_PROMPTS ?? 1000);
const MAX_TOKENS = Number(process.env.MOL_BENCH_GENUI_MAX_TOKENS ?? 320);
const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const SHOT_DIR = join(OUT_DIR, "genui-shots");
const CHROMIUM = process.env.MOL_CHROMIUM_PATH ?? "/usr/bin/chromium";

/** A variant is a harness overlay (MOL_HARNESS) on the per-model defaults: the edge runs it as it would in production. */
const VARIANTS: { name: string; about: string; overlay?: Record<string, unknown> }[] = [
  { name: "default", about: "the default harness: contract prompt with one exemplar, temperature 0.4" },
  {
    name: "exemplar-greedy",
    about: "a shorter prompt (adapt the example, keep its imports and shape) and greedy decoding",
    overlay: {
      specialists: {
        genui: {
          systemPrompt:
            'Reply with one JSX module only. Keep the import lines and the "export default function" shape of ' +
            'this example; change the name, the state and the UI for the request. Use only components from "@molmesh/ui".\n' +
            GENUI_EXEMPLAR,
          sampling: { temperature: 0, topK: 1 },
        },
      },
    },
  },
];

interface Outcome {
  prompt: string;
  compiles: boolean;
  valid: boolean;
  renders: boolean;
  findings: string;
  answerChars: number;
  shot?: string;
  renderError?: string;
}

async function askGenui(edgeUrl: string, prompt: string) {
  const response = await fetch(`${edgeUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "mol:genui",
      messages: [{ role: "user", content: prompt }],
      max_tokens: MAX_TOKENS,
    }),
  });
  const body = (await response.json()) as {
    choices?: { message: { content: string } }[];
    mol?: { genui?: MolGenui };
    error?: { message: string };
  };
  if (!response.ok) throw new Error(`chat completion: ${response.status} ${body.error?.message ?? ""}`);
  return { text: body.choices?.[0]?.message.content ?? "", genui: body.mol?.genui };
}

/** Opens the render link; renders = the frame initialized, reported no error and shows non-empty content. */
async function render(browser: Browser, url: string, shot: string): Promise<{ ok: boolean; error?: string }> {
  const page = await browser.newPage({ viewport: { width: 360, height: 300 } });
  try {
    await page.goto(url);
    const state = await page
      .waitForFunction(
        () => {
          const s = (window as unknown as { __genui?: { state: string; errors: string[] } }).__genui;
          return s && ["ready", "error", "killed"].includes(s.state) ? s : false;
        },
        null,
        { timeout: 10_000 },
      )
      .then((handle) => handle.jsonValue() as Promise<{ state: string; errors: string[] }>);
    await page.waitForTimeout(400);
    const frame = page.frames().find((f) => f.url().includes("/genui/frame/"));
    const text = (await frame?.evaluate(() => document.getElementById("root")?.innerHTML.length ?? 0)) ?? 0;
    const after = await page.evaluate(
      () => (window as unknown as { __genui: { state: string; errors: string[] } }).__genui,
    );
    await page.screenshot({ path: shot });
    if (state.state !== "ready" || after.errors.length > 0)
      return { ok: false, error: after.errors[0] ?? after.state };
    return text > 0 ? { ok: true } : { ok: false, error: "rendered nothing" };
  } catch (error) {
    return { ok: false, error: String(error).slice(0, 200) };
  } finally {
    await page.close();
  }
}

async function runVariant(
  onFailure: () => string,
  variant: (typeof VARIANTS)[number],
  natsWsUrl: string,
  browser: Browser,
  prompts: string[],
) {
  const edge = await spawnBenchEdge({
    name: `genui-${variant.name}`,
    natsWsUrl,
    devApiKey: KEY,
    vars: variant.overlay ? { MOL_HARNESS: JSON.stringify(variant.overlay) } : {},
  });
  const outcomes: Outcome[] = [];
  try {
    for (const [i, prompt] of prompts.entries()) {
      const asked = await askGenui(edge.url, prompt).catch((error: unknown) => {
        console.error(String(error), onFailure());
        return { text: "", genui: undefined };
      });
      const { text, genui } = asked;
      const local = validateComponent(extractComponentSource(text)).report;
      // An empty or failed answer compiles nothing (the validator alone would only say "no default export").
      const compiles = text.trim() !== "" && !local.findings.some((f) => f.rule === "syntax-error");
      const outcome: Outcome = {
        prompt,
        compiles,
        valid: genui?.status === "valid",
        renders: false,
        findings: genui?.summary.split("\n")[0] ?? "no verdict",
        answerChars: text.length,
      };
      if (genui?.renderUrl) {
        const shot = join(SHOT_DIR, `${variant.name}-${String(i).padStart(2, "0")}.png`);
        const result = await render(browser, genui.renderUrl, shot);
        outcome.renders = result.ok;
        if (result.ok) outcome.shot = shot;
        else {
          rmSync(shot, { force: true });
          if (result.error) outcome.renderError = result.error;
        }
      }
      outcomes.push(outcome);
      const n = outcomes.length;
      console.log(
        `${variant.name} ${n}/${prompts.length}: compiles ${count(outcomes, "compiles")}, valid ${count(outcomes, "valid")}, renders ${count(outcomes, "renders")} — ${prompt}`,
      );
    }
  } finally {
    await edge.stop();
  }
  return outcomes;
}

const count = (outcomes: Outcome[], key: "compiles" | "valid" | "renders") =>
  outcomes.filter((o) => o[key]).length;
const share = (outcomes: Outcome[], key: "compiles" | "valid" | "renders") =>
  `${count(outcomes, key)}/${outcomes.length} (${((100 * count(outcomes, key)) / Math.max(1, outcomes.length)).toFixed(0)} %)`;

function renderReport(
  results: { variant: (typeof VARIANTS)[number]; outcomes: Outcome[] }[],
  command: string,
) {
  const lines = [
    "## GenUI: SmolLM2-135M answers that compile, pass the checks and render (UI4A-style)",
    "",
    `Command: \`${command}\`. Each prompt of \`test/bench/genui-prompts.json\` goes once to \`mol:genui\` (the bare`,
    `SmolLM2-135M-Instruct Q4_1 base, ChatML views from the edge, max ${MAX_TOKENS} answer tokens) through a real`,
    "GPU node and the edge in workerd; the edge validates and stores the component, Debian Chromium opens its render",
    "link (sandbox origin, SES frame). Stages are cumulative: a component only renders if it passed the checks.",
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
    const shots = outcomes.filter((o) => o.shot);
    if (shots.length > 0) {
      lines.push("| | | |", "| --- | --- | --- |");
      for (let i = 0; i < shots.length; i += 3) {
        const cells = shots
          .slice(i, i + 3)
          .map((o) => `![${o.prompt}](genui-shots/${o.shot?.split("/").at(-1)})<br>${o.prompt}`);
        while (cells.length < 3) cells.push("");
        lines.push(`| ${cells.join(" | ")} |`);
      }
      lines.push("");
    }
  }
  return lines.join("\n");
}

async function main() {
  if (!REAL_MODEL_PATH)
    throw new Error(
      `${REAL_MODEL.fileName} not found: run \`npm run molmesh -- models pull ${REAL_MODEL.name}\``,
    );
  const prompts = (
    JSON.parse(readFileSync(join(REPO_ROOT, "test/bench/genui-prompts.json"), "utf8")) as {
      prompts: string[];
    }
  ).prompts.slice(0, LIMIT);
  rmSync(SHOT_DIR, { recursive: true, force: true });
  mkdirSync(SHOT_DIR, { recursive: true });
  const nats = await startNatsServer();
  const node = spawnBenchNode("genui-bench-node", nats.url, {
    MOL_BASE_MODEL: REAL_MODEL_PATH,
    MOL_THREADS: process.env.MOL_BENCH_THREADS ?? "2",
    MOL_SLOTS_PER_ADAPTER: "1",
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    await node.ready;
    const results = [];
    const command = describeBenchCommand("bench:genui", [
      "MOL_BENCH_GENUI_PROMPTS",
      "MOL_BENCH_GENUI_MAX_TOKENS",
      "MOL_BENCH_THREADS",
    ]);
    for (const variant of VARIANTS) {
      results.push({
        variant,
        outcomes: await runVariant(() => node.output().slice(-3000), variant, nats.wsUrl, browser, prompts),
      });
      // Written after each variant, so a long run that is stopped keeps what it measured.
      writeFileSync(
        join(OUT_DIR, "genui.json"),
        JSON.stringify({ command, machine: collectMachineFacts(), maxTokens: MAX_TOKENS, results }, null, 2) +
          "\n",
      );
      writeFileSync(join(OUT_DIR, "genui.md"), renderReport(results, command) + "\n");
    }
    console.log(renderReport(results, command).split("\n").slice(0, 12).join("\n"));
  } finally {
    await browser.close();
    await node.stop();
    await nats.dispose();
  }
}

await main();
