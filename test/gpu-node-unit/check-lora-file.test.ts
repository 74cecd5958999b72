import { describe, expect, it } from "vitest";
import { describeGgufHeader, findLoraMismatch } from "../../gpu-nodes/src/engine/llama/check-lora-file.ts";
import { buildLoraAdapter } from "../../gpu-nodes/tools/test-models/lora-adapter.ts";
import { TINY_LLAMA_DEFAULTS, buildTinyLlama } from "../../gpu-nodes/tools/test-models/tiny-llama.ts";

const tinyBase = buildTinyLlama();
const base = describeGgufHeader(tinyBase);
const loraFor = (model: ReturnType<typeof buildTinyLlama>, label = "chat") =>
  describeGgufHeader(buildLoraAdapter({ base: model, label }));

describe("findLoraMismatch", () => {
  it("accepts a LoRA made for the base", () => {
    expect(findLoraMismatch(loraFor(tinyBase), base)).toBeUndefined();
  });

  it("names the tensor whose shape differs when the LoRA was made for another base", () => {
    const wider = buildTinyLlama({ ...TINY_LLAMA_DEFAULTS, embeddingLength: 128 });
    expect(findLoraMismatch(loraFor(wider), base)).toMatch(
      /^tensor blk\.0\.attn_q\.weight is 64×64 in the base, .*128×4 and 4×128 \(a LoRA for another base\?\)$/,
    );
    const deeper = buildTinyLlama({ ...TINY_LLAMA_DEFAULTS, blockCount: 3 });
    expect(findLoraMismatch(loraFor(deeper), base)).toMatch(/the base has no tensor blk\.2\./);
  });

  it("refuses a model that is not an adapter, another architecture, and a half pair", () => {
    expect(findLoraMismatch(base, base)).toMatch(/^not a LoRA adapter/);
    const lora = loraFor(tinyBase);
    expect(findLoraMismatch({ ...lora, architecture: "qwen2" }, base)).toBe(
      "made for architecture qwen2, the base is llama",
    );
    const tensors = new Map(lora.tensors);
    tensors.delete("blk.1.ffn_up.weight.lora_b");
    expect(findLoraMismatch({ ...lora, tensors }, base)).toBe(
      "tensor blk.1.ffn_up.weight has only one of lora_a and lora_b",
    );
    expect(findLoraMismatch({ ...lora, tensors: new Map() }, base)).toBe("it holds no LoRA tensors");
  });
});
