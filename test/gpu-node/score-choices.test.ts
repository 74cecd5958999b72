import { getLlama, LlamaLogLevel, type Llama, type LlamaContextSequence, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SlotTokens } from "../../gpu-nodes/src/engine/llama/slot-tokens.ts";
import { scoreChoicesOnSequence } from "../../gpu-nodes/src/engine/llama/score-choices.ts";
import { findTrainedRouter } from "../../gpu-nodes/tools/models/find-trained-router.ts";
import { loadCorpus } from "../../gpu-nodes/training/router/check-corpus.ts";
import { weightsSha256s } from "../../gpu-nodes/tools/models/model-catalog.ts";
import { buildDefaultHarness } from "../../schema/harness/default-harness.ts";
import { SPECIALIST_LABELS } from "../../schema/wire/v2/index.ts";
import { renderExamplePrompt } from "../bench/routing/render-router-prompts.ts";
import { REAL_MODEL, REAL_MODEL_PATH, skipWithoutRealModel } from "../harness/real-model.ts";

/**
 * Route scoring reads the model's probabilities for its top 1,024 tokens only, and gives each label the
 * probability a choice grammar does: legal tokens renormalised at each step, so a step with one legal token is
 * certain and needs no forward pass. Checked here against that grammar computed over the whole vocabulary, on
 * the trained router over SmolLM2, for test examples of every label.
 */
const skip = skipWithoutRealModel("score-choices");
const router = findTrainedRouter(weightsSha256s(REAL_MODEL));
const EXACT = { temperature: 1, topK: 0, topP: 1, minP: 0 } as const;
const LABELS = [...SPECIALIST_LABELS];
/**
 * Labels that branch: "genuine" ("gen" "u" "ine") leaves "gen" with two legal tokens, and "chatbot" ("chat"
 * "bot") makes "chat" a point where the grammar may end or go on. "kubernetes" ("k" "uber" "netes") branches
 * nowhere: its later steps are certain.
 */
const BRANCHING_LABELS = [...SPECIALIST_LABELS, "genuine", "chatbot", "kubernetes"];

let llama: Llama;
beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
});
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await llama?.dispose();
});

/** P(label | view) under the labels' grammar, every step over the whole vocabulary; the sequence holds the view. */
async function grammarLabelProbabilities(
  sequence: LlamaContextSequence,
  labels: readonly string[],
): Promise<number[]> {
  const model = sequence.model;
  const view = [...sequence.contextTokens];
  const paths = labels.map((label) => model.tokenize(label, false));
  /** The whole next-token distribution after the view and `path`. */
  const distributionAfter = async (path: readonly Token[]) => {
    const tokens = [...view.slice(-1), ...path];
    await sequence.eraseContextTokenRanges([{ start: view.length - 1, end: sequence.nextTokenIndex }]);
    const out = await sequence.controlledEvaluate(
      tokens.map((token, i) =>
        i === tokens.length - 1 ? [token, { generateNext: { probabilities: true, options: EXACT } }] : token,
      ),
    );
    await sequence.eraseContextTokenRanges([{ start: view.length, end: sequence.nextTokenIndex }]);
    return out.at(-1)?.next.probabilities ?? new Map<Token, number>();
  };
  const result: number[] = [];
  for (const path of paths) {
    let p = 1;
    for (let depth = 0; depth < path.length; depth++) {
      const prefix = path.slice(0, depth);
      const sharing = paths.filter((other) => prefix.every((t, i) => other[i] === t));
      const legal = new Set(sharing.filter((o) => o.length > depth).map((o) => o[depth] as Token));
      const mayEnd = sharing.some((o) => o.length === depth);
      if (legal.size + (mayEnd ? 1 : 0) === 1) continue;
      const next = await distributionAfter(prefix);
      let total = 0;
      for (const token of legal) total += next.get(token) ?? 0;
      if (mayEnd) for (const [token, q] of next) if (model.isEogToken(token)) total += q;
      p *= (next.get(path[depth] as Token) ?? 0) / total;
    }
    // A label that is a prefix of another ends where the other goes on.
    const longer = paths.filter((o) => o.length > path.length && path.every((t, i) => o[i] === t));
    if (longer.length > 0) {
      const next = await distributionAfter(path);
      let end = 0;
      for (const [token, q] of next) if (model.isEogToken(token)) end += q;
      let total = end;
      for (const token of new Set(longer.map((o) => o[path.length] as Token))) total += next.get(token) ?? 0;
      p *= end / total;
    }
    result.push(p);
  }
  return result;
}

describe.skipIf(skip || router === undefined)("route scoring on the trained router", () => {
  it.each([
    ["the four specialists", LABELS],
    ["labels that branch", BRANCHING_LABELS],
  ])(
    "gives each label its probability under the labels' grammar: %s",
    async (_name, labels) => {
      const model = await llama.loadModel({ modelPath: REAL_MODEL_PATH as string });
      const context = await model.createContext({
        contextSize: 2048,
        // One thread: the full suite runs beside it on two cores, where two would wait on each other.
        threads: 1,
        lora: { adapters: [{ filePath: router?.path as string }] },
      });
      try {
        const sequence = context.getSequence();
        const harness = buildDefaultHarness({ family: "chatml", contextTokens: 8192 });
        const examples = LABELS.flatMap((label) =>
          loadCorpus()
            .records.filter((r) => r.split === "test" && r.label === label)
            .slice(0, 4),
        );
        let worst = 0;
        let passes = 0;
        for (const [i, example] of examples.entries()) {
          let evaluations = 0;
          const counted = new Proxy(sequence, {
            get(target, key, receiver) {
              if (key === "controlledEvaluate") {
                return (...args: Parameters<LlamaContextSequence["controlledEvaluate"]>) => {
                  evaluations++;
                  return target.controlledEvaluate(...args);
                };
              }
              const value: unknown = Reflect.get(target, key, receiver);
              return typeof value === "function" ? (value as () => unknown).bind(target) : value;
            },
          });
          const { result: scored } = await scoreChoicesOnSequence({
            sequence: counted,
            slotTokens: new SlotTokens(),
            choices: labels,
            now: () => performance.now(),
            request: {
              adapter: "l0",
              conversationId: `c${i}`,
              prompt: renderExamplePrompt(example, harness),
              maxTokens: 24,
              temperature: 0,
              topP: 1,
              topK: 0,
              stop: [],
              signal: new AbortController().signal,
            },
          });
          passes += evaluations;
          const exact = await grammarLabelProbabilities(sequence, labels);
          const best = exact.indexOf(Math.max(...exact));
          expect(scored.text, example.id).toBe(labels[best]);
          const sum = labels.reduce((n, label) => n + (scored.choiceProbabilities?.[label] ?? NaN), 0);
          expect(sum).toBeCloseTo(1, 9);
          for (const [k, label] of labels.entries()) {
            const d = Math.abs((scored.choiceProbabilities?.[label] ?? NaN) - (exact[k] as number));
            worst = Math.max(worst, d);
          }
        }
        // Ratios among kept tokens are exact. The reference evaluates the view's last token alone where the hop
        // evaluated it in the view's batch, and llama.cpp's batched and one-token kernels round apart (~1e-4).
        expect(worst).toBeLessThan(1e-3);
        if (labels === LABELS) {
          // No two labels share a first token: one forward pass per hop, the view's, genui included.
          expect(passes).toBe(examples.length);
        } else {
          // The "gen" and "chat" branches need the model once more, on the examples whose labels start so.
          expect(passes).toBeGreaterThan(examples.length);
        }
      } finally {
        await context.dispose();
        await model.dispose();
      }
    },
    // The exact reference evaluates every label over the whole vocabulary: slow beside the full suite.
    240_000,
  );
});
