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
import {
  GENUI_ANSWER_SKELETON,
  GENUI_CONTRACT_PROMPT,
  GENUI_EXEMPLAR,
} from "../../schema/harness/genui-contract-prompt.ts";
import { CHAT_TEMPLATE_FAMILIES } from "../../schema/harness/chat-templates.ts";
import { buildHarness } from "../../schema/harness/harness-config.ts";
import { describeBenchCommand } from "./describe-bench-command.ts";
import { collectMachineFacts } from "./machine-facts.ts";
import { spawnBenchEdge } from "./spawn-bench-edge.ts";
import { CALIBRATION_SOURCES, MORE_EXEMPLARS } from "./genui-bench-exemplars.ts";
import { count, gridFile, renderGenuiReport, type Outcome } from "./render-genui-report.ts";
import { SHOT_DIR, composeGrid, renderComponent } from "./shoot-genui-components.ts";
import { spawnBenchNode } from "./spawn-bench-node.ts";

const KEY = "sk-bench-genui-0123456789abcdef";
const LIMIT = Number(process.env.MOL_BENCH_GENUI_PROMPTS ?? 1000);
const MAX_TOKENS = Number(process.env.MOL_BENCH_GENUI_MAX_TOKENS ?? 200);
/**
 * The hop limits are for a GPU; on this bench's shared CPU cores a ~1k-token genui view takes seconds to prefill,
 * longer when other work runs, and the production 3 s to the first part timed hops out. Generous, not unbounded.
 */
const HOP_TIMEOUT_VARS = {
  MOL_HOP_FIRST_PART_TIMEOUT_MS: "240000",
  MOL_HOP_STALL_TIMEOUT_MS: "120000",
  MOL_HOP_REPLY_TIMEOUT_MS: "180000",
};
/**
 * The node's KV tokens per slot. At the 4,096 default the genui view has room only for the one-line contract (no
 * exemplar); SmolLM2 was trained on 8,192, where the default harness carries its exemplar and the variants fit.
 */
const CONTEXT_TOKENS = 8192;
const SETTINGS = { contextTokens: CONTEXT_TOKENS, maxTokens: MAX_TOKENS };
/**
 * The answer's limit stays under Node's fetch, which stops waiting for response headers at 300 s, so the edge's 504
 * comes first. The summary (after the answer, not measured here) is cut to one token: it would only take CPU from
 * the next answer.
 */
const SLOW_HOPS = { answerTimeoutMs: 280_000, summary: { timeoutMs: 180_000, maxTokens: 1 } };

const OUT_DIR = process.env.MOL_BENCH_OUT ?? join(REPO_ROOT, "test", "bench", "results");
const CHROMIUM = process.env.MOL_CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The four-exemplar variant's changes to the default harness; the skeleton variant below adds its prefix. */
const FOUR_EXEMPLARS = {
  // After the request, where a small model looks last (the user line's end; ChatML's end-of-turn after it).
  templates: {
    userEnd: ` Reply with only the JSX module.${CHAT_TEMPLATE_FAMILIES.chatml.templates.lineEnd}`,
  },
  genui: {
    systemPrompt: `${GENUI_CONTRACT_PROMPT}\nMore examples, one module each:\n${MORE_EXEMPLARS}`,
    sampling: { temperature: 0, topK: 1 },
  },
};

/**
 * The full skeleton's import line of the whole kit gets copied into endless name lists by the 135M model; this
 * one imports four names and starts the JSX itself.
 */
const JSX_SKELETON = `import { useState } from "react";
import { Card, Stack, Text, Button } from "@molmesh/ui";

export default function Component() {
  return (
    <Card title="`;

/** A variant is a harness overlay (MOL_HARNESS) on the per-model defaults: the edge runs it as it would in production. */
const VARIANTS: { name: string; about: string; overlay: Record<string, unknown> }[] = [
  {
    name: "default",
    about: "the default harness: contract prompt with one exemplar, temperature 0.4",
    overlay: { specialists: { genui: SLOW_HOPS } },
  },
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
          ...SLOW_HOPS,
        },
      },
    },
  },
  {
    name: "four-exemplars-greedy",
    about:
      "the default contract prompt plus three more worked answers (form, table, chart), a one-line reminder " +
      "after the request, greedy decoding",
    overlay: {
      templates: FOUR_EXEMPLARS.templates,
      specialists: { genui: { ...FOUR_EXEMPLARS.genui, ...SLOW_HOPS } },
    },
  },
  {
    name: "skeleton",
    about:
      "the default harness with the answer skeleton prefilled (`answerPrefix`: the two import lines and " +
      "`export default function Component() {`; the model writes the body)",
    overlay: { specialists: { genui: { ...SLOW_HOPS, answerPrefix: GENUI_ANSWER_SKELETON } } },
  },
  {
    name: "skeleton-jsx",
    about:
      "the default harness with a shorter skeleton prefilled: four kit imports and the function opened down to " +
      '`return (<Card title="` (the model writes the title and the JSX)',
    overlay: { specialists: { genui: { ...SLOW_HOPS, answerPrefix: JSX_SKELETON } } },
  },
  {
    name: "skeleton-four-exemplars-greedy",
    about: "four-exemplars-greedy with the answer skeleton prefilled",
    overlay: {
      templates: FOUR_EXEMPLARS.templates,
      specialists: {
        genui: { ...FOUR_EXEMPLARS.genui, ...SLOW_HOPS, answerPrefix: GENUI_ANSWER_SKELETON },
      },
    },
  },
];

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
  const raw = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`chat completion: ${response.status}, not JSON: ${raw.slice(0, 200)}`);
  }
  const body = parsed as {
    choices?: { message: { content: string } }[];
    mol?: { genui?: MolGenui };
    error?: { message: string };
  };
  if (!response.ok) throw new Error(`chat completion: ${response.status} ${body.error?.message ?? ""}`);
  return { text: body.choices?.[0]?.message.content ?? "", genui: body.mol?.genui };
}

/** Stores `source` as a component through the edge's API (the same validator and store an answer goes through). */
async function storeComponent(edgeUrl: string, source: string) {
  const response = await fetch(`${edgeUrl}/v1/genui/components`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ source }),
  });
  const body = (await response.json()) as {
    status?: string;
    render_url?: string;
    report?: { findings: { rule: string; message: string }[] };
  };
  return {
    valid: body.status === "valid",
    renderUrl: body.render_url,
    findings: body.report?.findings.map((f) => `${f.rule} ${f.message}`)[0] ?? "",
  };
}

async function runCalibration(natsWsUrl: string, browser: Browser, outcomes: Outcome[]) {
  const edge = await spawnBenchEdge({
    onLog: () => undefined,
    name: "genui-calibration",
    natsWsUrl,
    devApiKey: KEY,
    vars: HOP_TIMEOUT_VARS,
  });
  try {
    for (const [i, source] of CALIBRATION_SOURCES.entries()) {
      const name = /export default function (\w+)/.exec(source)?.[1] ?? String(i);
      const local = validateComponent(extractComponentSource(source)).report;
      const stored = await storeComponent(edge.url, source);
      const outcome: Outcome = {
        prompt: `exemplar ${name} (not model output)`,
        compiles: !local.findings.some((f) => f.rule === "syntax-error"),
        valid: stored.valid,
        renders: false,
        findings: stored.findings,
        answerChars: source.length,
        answer: source,
      };
      if (stored.renderUrl) {
        const shot = `calibration-${String(i).padStart(2, "0")}.png`;
        const result = await renderComponent(browser, stored.renderUrl, join(SHOT_DIR, shot));
        outcome.renders = result.ok;
        if (result.ok) outcome.shot = shot;
        else if (result.error) outcome.renderError = result.error;
      }
      outcomes.push(outcome);
    }
  } finally {
    await edge.stop();
  }
}

async function runVariant(
  onFailure: () => string,
  variant: (typeof VARIANTS)[number],
  natsWsUrl: string,
  browser: Browser,
  prompts: string[],
  outcomes: Outcome[],
  onOutcome: () => void,
) {
  // The edge's error lines say why a turn failed (the API answer only names the code).
  const edgeErrors: string[] = [];
  const edge = await spawnBenchEdge({
    onLog: (line) => {
      if (/"level":"error"|Error/.test(line)) edgeErrors.push(line.slice(0, 600));
    },
    name: `genui-${variant.name}`,
    natsWsUrl,
    devApiKey: KEY,
    vars: { ...HOP_TIMEOUT_VARS, MOL_HARNESS: JSON.stringify(variant.overlay) },
  });
  try {
    for (const [i, prompt] of prompts.entries()) {
      const asked = await askGenui(edge.url, prompt).catch((error: unknown) => {
        console.error(String(error), edgeErrors.splice(0).slice(-3).join("\n"), onFailure());
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
        answer: text,
      };
      if (genui?.renderUrl) {
        const name = `${variant.name}-${String(i).padStart(2, "0")}.png`;
        const shot = join(SHOT_DIR, name);
        const result = await renderComponent(browser, genui.renderUrl, shot);
        outcome.renders = result.ok;
        if (result.ok) outcome.shot = name;
        else {
          rmSync(shot, { force: true });
          if (result.error) outcome.renderError = result.error;
        }
      }
      outcomes.push(outcome);
      onOutcome();
      const n = outcomes.length;
      console.log(
        `${variant.name} ${n}/${prompts.length}: compiles ${count(outcomes, "compiles")}, valid ${count(outcomes, "valid")}, renders ${count(outcomes, "renders")} — ${prompt}`,
      );
    }
  } finally {
    await edge.stop();
  }
}

const CALIBRATION = {
  name: "calibration",
  about: `**not model output**: the ${CALIBRATION_SOURCES.length} worked exemplars of the prompts, stored through \`POST /v1/genui/components\` (the same checks and store) and rendered the same way`,
};

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
  // The edge would log an overlay that does not fit and serve the defaults: a variant that measured nothing new.
  for (const variant of VARIANTS)
    buildHarness({ family: "chatml", contextTokens: CONTEXT_TOKENS }, variant.overlay);
  rmSync(SHOT_DIR, { recursive: true, force: true });
  mkdirSync(SHOT_DIR, { recursive: true });
  const nats = await startNatsServer();
  const node = spawnBenchNode("genui-bench-node", nats.url, {
    MOL_BASE_MODEL: REAL_MODEL_PATH,
    // One thread: with two on two contended cores, llama.cpp's threads wait on each other at every barrier.
    MOL_THREADS: process.env.MOL_BENCH_THREADS ?? "1",
    // The previous prompt's summary hop may still hold its conversation's slot when the next answer arrives.
    MOL_SLOTS_PER_ADAPTER: "4",
    MOL_CONTEXT_SIZE: String(CONTEXT_TOKENS),
    MOL_LOG_LEVEL: process.env.MOL_BENCH_NODE_LOG_LEVEL ?? "warn",
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    await node.ready;
    const command = describeBenchCommand("bench:genui", [
      "MOL_BENCH_GENUI_PROMPTS",
      "MOL_BENCH_GENUI_MAX_TOKENS",
      "MOL_BENCH_THREADS",
      "MOL_BENCH_GENUI_VARIANTS",
    ]);
    const only = process.env.MOL_BENCH_GENUI_VARIANTS?.split(",");
    const results = VARIANTS.filter((v) => !only || only.includes(v.name)).map((variant) => ({
      variant,
      outcomes: [] as Outcome[],
    }));
    const calibration = { variant: CALIBRATION, outcomes: [] as Outcome[] };
    await runCalibration(nats.wsUrl, browser, calibration.outcomes);
    await composeGrid(browser, calibration.outcomes, join(OUT_DIR, gridFile(CALIBRATION.name)));
    // Written after every answer, so a long run that is stopped keeps what it measured.
    const write = () => {
      writeFileSync(
        join(OUT_DIR, "genui.json"),
        JSON.stringify(
          {
            command,
            machine: collectMachineFacts(),
            maxTokens: MAX_TOKENS,
            results: [calibration, ...results],
          },
          null,
          2,
        ) + "\n",
      );
      writeFileSync(
        join(OUT_DIR, "genui.md"),
        renderGenuiReport([calibration, ...results], command, SETTINGS) + "\n",
      );
    };
    // The variants run side by side, each on its own edge: the node batches their answers, which a shared CPU
    // needs. Only shares are measured here, no latency, so the overlap changes no figure.
    await Promise.all(
      results.map(async ({ variant, outcomes }) => {
        await runVariant(
          () => node.output().slice(-3000),
          variant,
          nats.wsUrl,
          browser,
          prompts,
          outcomes,
          write,
        );
        await composeGrid(browser, outcomes, join(OUT_DIR, gridFile(variant.name)));
      }),
    );
    write();
    console.log(
      renderGenuiReport([calibration, ...results], command, SETTINGS)
        .split("\n")
        .slice(0, 14)
        .join("\n"),
    );
  } finally {
    await browser.close();
    await node.stop();
    await nats.dispose();
  }
}

await main();
