import { existsSync } from "node:fs";
import { readGgufFileInfo } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { resolveTestModelDefaults } from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import {
  GGML_TYPE,
  getGgufArray,
  getGgufNumber,
  getGgufString,
  measureGgufTensors,
} from "../../gpu-nodes/src/models/gguf/types.ts";
import { readGgufFileHeader } from "../../gpu-nodes/src/models/gguf/reader.ts";

const { fixturePath } = resolveTestModelDefaults();

describe.skipIf(!existsSync(fixturePath))("the llama.cpp-converted fixture's header", () => {
  it("has the documented hyper-parameters and a 32k SPM vocabulary", async () => {
    const header = await readGgufFileHeader(fixturePath);
    const { metadata } = header;
    expect(header.version).toBe(3);
    expect(getGgufString(metadata, "general.architecture")).toBe("llama");
    expect(getGgufNumber(metadata, "llama.embedding_length")).toBe(8);
    expect(getGgufNumber(metadata, "llama.block_count")).toBe(1);
    expect(getGgufNumber(metadata, "llama.feed_forward_length")).toBe(32);
    expect(getGgufNumber(metadata, "llama.attention.head_count")).toBe(2);
    expect(getGgufNumber(metadata, "llama.context_length")).toBe(4096);
    expect(getGgufNumber(metadata, "llama.attention.layer_norm_rms_epsilon")).toBeCloseTo(1e-5, 9);
    expect(getGgufString(metadata, "tokenizer.ggml.model")).toBe("llama");
    const tokens = getGgufArray(metadata, "tokenizer.ggml.tokens", "string");
    expect(tokens).toHaveLength(32000);
    expect(tokens.slice(0, 4)).toEqual(["<unk>", "<s>", "</s>", "<0x00>"]);
    expect(getGgufArray(metadata, "tokenizer.ggml.scores", "f32")).toHaveLength(32000);
    expect(getGgufArray(metadata, "tokenizer.ggml.token_type", "i32").slice(0, 4)).toEqual([2, 3, 3, 6]);
  });

  it("lists 12 tensors whose sizes add up to the file's data section", async () => {
    const header = await readGgufFileHeader(fixturePath);
    expect(header.tensors).toHaveLength(12);
    expect(header.tensors.find((t) => t.name === "token_embd.weight")).toEqual({
      name: "token_embd.weight",
      dims: [8, 32000],
      type: GGML_TYPE.F16,
      offset: 0,
    });
    const totals = measureGgufTensors(header.tensors);
    // 2 × 8·32000 (embeddings, output) + 4 × 8·8 (attention) + 3 × 8·32 (ffn) + 3 × 8 (norms).
    expect(totals.totalParameters).toBe(2 * 8 * 32000 + 4 * 64 + 3 * 256 + 3 * 8);
    // F16 matrices, F32 norm vectors.
    expect(totals.totalBytes).toBe((2 * 8 * 32000 + 4 * 64 + 3 * 256) * 2 + 3 * 8 * 4);
    expect(totals.byTensor.find((t) => t.name === "blk.0.ffn_down.weight")).toEqual({
      name: "blk.0.ffn_down.weight",
      parameters: 256,
      bytes: 512,
    });
  });

  it("agrees with node-llama-cpp's parser on every tensor", async () => {
    const header = await readGgufFileHeader(fixturePath);
    const info = await readGgufFileInfo(fixturePath, { readTensorInfo: true, logWarnings: false });
    expect(
      info.fullTensorInfo?.map((t) => [t.name, t.dimensions.map(Number), t.ggmlType, Number(t.offset)]),
    ).toEqual(header.tensors.map((t) => [t.name, t.dims, t.type, t.offset]));
    expect(header.dataOffset).toBe(Number(info.fullTensorInfo?.[0]?.fileOffset));
  });
});
