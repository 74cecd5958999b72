import { LlamaLogLevel, getLlama, type Llama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ensureTestModels,
  resolveTestModelDefaults,
  type TestModelPaths,
} from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { generateGreedy } from "./generate-greedy.ts";

const PROMPT = "The user asked the assistant to";

describe("the tiny llama model under llama.cpp", () => {
  let paths: TestModelPaths;
  let llama: Llama;
  let model: LlamaModel;

  beforeAll(async () => {
    paths = await ensureTestModels(resolveTestModelDefaults());
    llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.warn });
    model = await llama.loadModel({ modelPath: paths.base });
  });
  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
    await model?.dispose();
    await llama?.dispose();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  it("loads with the generated hyper-parameters", () => {
    expect(model.trainContextSize).toBe(4096);
    expect(model.fileInsights.embeddingVectorSize).toBe(64);
    expect(model.tokens.bos).toBe(1);
    expect(model.tokens.eos).toBe(2);
  });

  // A literal "▁" in the input is not round-tripped: SPM reads it as a space, as in every llama vocab.
  it.each([
    "Hello world",
    "hello world, how are you?\nLine two\ttabbed (parens) [brackets] {braces} 100% #1 & more!",
    "  leading and double  spaces and trailing  ",
    "\n\nnewlines first\r\n",
    "café naïve résumé über 日本語 🙂👍🏽 ∑ ≠",
  ])("round-trips %j through tokenize and detokenize", (text) => {
    expect(model.detokenize(model.tokenize(text))).toBe(text);
  });

  it("tokenizes common words to whole-word tokens", () => {
    expect(model.tokenize("chat agent coding genui route summary user assistant system")).toHaveLength(9);
    expect(model.tokenize("Hello world")).toHaveLength(2);
    // "asked" is not a word piece: "▁ask" + "e" + "d"; every other word is one token.
    expect(model.tokenize("The user asked the assistant to")).toHaveLength(8);
    // Unknown characters fall back to bytes rather than <unk>: é is two UTF-8 bytes.
    expect(model.tokenize("é").map((token) => Number(token))).not.toContain(0);
  });

  it("generates varied text, deterministically", async () => {
    const first = await generateGreedy(model, PROMPT);
    expect(first.trim().length).toBeGreaterThan(10);
    const words = first.trim().split(/\s+/);
    expect(new Set(words).size).toBeGreaterThan(3);
    expect(await generateGreedy(model, PROMPT)).toBe(first);
  });

  it("changes its output under each LoRA, and each LoRA differently", async () => {
    const bare = await generateGreedy(model, PROMPT);
    const outputs = new Map<string, string>();
    for (const [label, loraPath] of Object.entries(paths.adapters)) {
      const output = await generateGreedy(model, PROMPT, loraPath);
      expect(output.trim().length, label).toBeGreaterThan(0);
      expect(output, label).not.toBe(bare);
      // Byte and control tokens have zero output rows, so greedy text stays printable ASCII.
      expect(output, label).toMatch(/^[\x20-\x7e]+$/);
      outputs.set(label, output);
    }
    expect(outputs.size).toBe(5);
    expect(new Set(outputs.values()).size).toBe(outputs.size);
  });
});
