import { existsSync } from "node:fs";
import { LlamaLogLevel, getLlama, type Llama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ensureTestModels,
  resolveTestModelDefaults,
  type TestModelPaths,
} from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { generateGreedy } from "./generate-greedy.ts";

const defaults = resolveTestModelDefaults();
const PROMPT = "Hello world, this is";

describe.skipIf(!existsSync(defaults.fixturePath))("LoRAs generated for the converter-made fixture", () => {
  let fixture: NonNullable<TestModelPaths["fixture"]>;
  let llama: Llama;
  let model: LlamaModel;

  beforeAll(async () => {
    const paths = await ensureTestModels(defaults);
    if (!paths.fixture) throw new Error("ensureTestModels skipped an existing fixture");
    fixture = paths.fixture;
    llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.warn });
    model = await llama.loadModel({ modelPath: fixture.base });
  });
  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
    await model?.dispose();
    await llama?.dispose();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  it("load into llama.cpp and each change the greedy output", async () => {
    const bare = await generateGreedy(model, PROMPT);
    expect(bare.length).toBeGreaterThan(0);
    const outputs = new Set<string>();
    for (const [label, loraPath] of Object.entries(fixture.adapters)) {
      const output = await generateGreedy(model, PROMPT, loraPath);
      expect(output, label).not.toBe(bare);
      outputs.add(output);
    }
    expect(outputs.size).toBe(Object.keys(fixture.adapters).length);
  });
});
