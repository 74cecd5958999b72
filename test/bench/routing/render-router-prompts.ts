/**
 * The router's training and eval prompts, built by the edge's own view code: each corpus example becomes a
 * timeline (its context turns as user_message + route_decision, then the message), reduced to views and
 * rendered with renderRoutePrompt, then tokenized by the node's tokenizeView on the same GGUF. The Python
 * trainer reads only these token ids, so a change of view format or chat template reaches training by
 * re-running this script, and tokenizer drift between trainer and node cannot happen. It lives under test/, the
 * one place that may import both the edge's views and the node's tokenizer.
 * Usage: tsx test/bench/routing/render-router-prompts.ts <base.gguf> <out.jsonl>
 */
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { getLlama, LlamaLogLevel, type LlamaModel } from "node-llama-cpp";
import type { TimelineEvent } from "../../../workers/src/db/timeline-event.ts";
import { DEFAULT_CONTEXT_TOKENS, buildDefaultHarness } from "../../../schema/harness/default-harness.ts";
import type { HarnessDocument } from "../../../schema/harness/harness-settings.ts";
import {
  describeServedModel,
  tokenizePrompt,
  tokenizeView,
} from "../../../gpu-nodes/src/engine/llama/tokenize-prompt.ts";
import { loadCorpus, type CorpusRecord } from "../../../gpu-nodes/training/router/check-corpus.ts";
import { renderRoutePrompt } from "../../../workers/src/views/render-prompts.ts";
import { buildConversationViews } from "../../../workers/src/views/views-reducer.ts";

export type RoutingExample = Pick<CorpusRecord, "id" | "message" | "label" | "split" | "context">;

/** The timeline the edge would hold just before this example's route hop. */
export function exampleTimeline(example: RoutingExample): TimelineEvent[] {
  const events: TimelineEvent[] = [];
  (example.context ?? []).forEach((turn, index) => {
    const turnId = `c${index}`;
    events.push({ type: "user_message", turnId, text: turn.message, harnessHash: "router-corpus" });
    events.push({ type: "route_decision", turnId, label: turn.label, source: "router" });
  });
  events.push({ type: "user_message", turnId: "t", text: example.message, harnessHash: "router-corpus" });
  return events;
}

export function renderExamplePrompt(example: RoutingExample, harness: HarnessDocument): string {
  return renderRoutePrompt(buildConversationViews(exampleTimeline(example), harness), harness);
}

/** A label's tokens as they follow the route cue (no BOS, no leading-space trimming). */
export function tokenizeLabel(model: LlamaModel, label: string): number[] {
  return [...model.tokenize(label, false)];
}

async function main(): Promise<void> {
  const [basePath, outPath] = process.argv.slice(2);
  if (!basePath || !outPath) throw new Error("usage: render-router-prompts.ts <base.gguf> <out.jsonl>");
  const { records, problems } = loadCorpus();
  if (problems.length > 0) throw new Error(`the corpus has ${problems.length} problems; run check-corpus.ts`);
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: basePath, gpuLayers: 0 });
  // The views the edge renders for this model (its GGUF's chat format): an adapter trained on one format routes
  // far worse on another (the committed plain-view l0 on ChatML views: test 54 %, see route-eval-chatml-v1.md).
  const views = {
    family: describeServedModel(model, DEFAULT_CONTEXT_TOKENS).templateFamily,
    contextTokens: DEFAULT_CONTEXT_TOKENS,
  };
  const harness = buildDefaultHarness(views);
  const labels = Object.fromEntries(harness.router.labels.map((l) => [l, tokenizeLabel(model, l)]));
  const lines = [
    JSON.stringify({
      kind: "labels",
      labels,
      lineEnd: [...tokenizePrompt(model, harness.templates.lineEnd)],
      views,
    }),
  ];
  for (const record of records) {
    const prompt = renderExamplePrompt(record, harness);
    const fullPrompt = tokenizeView(model, prompt);
    lines.push(
      JSON.stringify({
        kind: "example",
        id: record.id,
        split: record.split,
        label: record.label,
        prompt,
        tokens: [...fullPrompt],
      }),
    );
  }
  writeFileSync(outPath, lines.join("\n") + "\n");
  console.log(`wrote ${records.length} prompts to ${outPath}; label tokens ${JSON.stringify(labels)}`);
  await model.dispose();
  await llama.dispose();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
