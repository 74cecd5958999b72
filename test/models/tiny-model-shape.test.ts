import { describe, expect, it } from "vitest";
import {
  SPM_SPACE,
  SPM_TOKEN_TYPE,
  TINY_LLAMA_DEFAULTS,
  TINY_VOCAB_WORDS,
  buildSpmVocab,
  buildTinyLlama,
} from "../../gpu-nodes/tools/test-models/tiny-llama.ts";
import { getGgufArray, getGgufNumber, measureGgufTensors } from "../../gpu-nodes/src/models/gguf/types.ts";
import { buildLoraAdapter } from "../../gpu-nodes/tools/test-models/lora-adapter.ts";

const TINY_VOCAB_SIZE = 2074;

describe("the tiny llama model", () => {
  const tiny = buildTinyLlama();

  it("declares the documented hyper-parameters", () => {
    const numberOf = (key: string): number => getGgufNumber(tiny.metadata, `llama.${key}`);
    expect(numberOf("embedding_length")).toBe(64);
    expect(numberOf("block_count")).toBe(2);
    expect(numberOf("feed_forward_length")).toBe(128);
    expect(numberOf("attention.head_count")).toBe(4);
    expect(numberOf("attention.head_count_kv")).toBe(2);
    expect(numberOf("rope.dimension_count")).toBe(16);
    expect(numberOf("context_length")).toBe(4096);
    expect(numberOf("vocab_size")).toBe(TINY_VOCAB_SIZE);
    expect(getGgufArray(tiny.metadata, "tokenizer.ggml.tokens", "string")).toHaveLength(TINY_VOCAB_SIZE);
  });

  it("counts parameters and bytes as computed by hand", () => {
    const totals = measureGgufTensors(tiny.tensors);
    const embeddings = 64 * TINY_VOCAB_SIZE;
    // attn_norm + q + k + v + output + ffn_norm + gate + up + down (n_embd_kv = 16 · 2 heads = 32).
    const perBlock = 64 + 64 * 64 + 64 * 32 + 64 * 32 + 64 * 64 + 64 + 3 * 64 * 128;
    expect(perBlock).toBe(36_992);
    expect(totals.totalParameters).toBe(2 * embeddings + 64 + 2 * perBlock);
    expect(totals.totalParameters).toBe(339_520);
    expect(totals.totalBytes).toBe(339_520 * 4);
    expect(totals.byTensor).toHaveLength(3 + 2 * 9);
    expect(totals.byTensor.find((t) => t.name === "blk.1.attn_k.weight")).toEqual({
      name: "blk.1.attn_k.weight",
      parameters: 2048,
      bytes: 8192,
    });
  });

  it("gives each LoRA rank-4 A/B pairs on the seven block projections", () => {
    const lora = buildLoraAdapter({ base: tiny, label: "chat" });
    expect(lora.tensors).toHaveLength(2 * 7 * 2);
    const shapes = new Map(lora.tensors.map((t) => [t.name, t.dims]));
    expect(shapes.get("blk.0.attn_k.weight.lora_a")).toEqual([64, 4]);
    expect(shapes.get("blk.0.attn_k.weight.lora_b")).toEqual([4, 32]);
    expect(shapes.get("blk.1.ffn_down.weight.lora_a")).toEqual([128, 4]);
    expect(shapes.get("blk.1.ffn_down.weight.lora_b")).toEqual([4, 64]);
    // Per block: q 512 + k 384 + v 384 + o 512 + gate 768 + up 768 + down 768.
    expect(measureGgufTensors(lora.tensors).totalParameters).toBe(2 * 4096);
  });

  it("draws the same weights from the same seed and different ones per adapter label", () => {
    const bytesOf = (name: string, input = tiny): Uint8Array => {
      const data = input.tensors.find((t) => t.name === name)?.data();
      if (!(data instanceof Uint8Array)) throw new Error(`no single-buffer tensor ${name}`);
      return data.slice();
    };
    expect(bytesOf("blk.0.attn_q.weight")).toEqual(bytesOf("blk.0.attn_q.weight", buildTinyLlama()));
    expect(bytesOf("blk.0.attn_q.weight")).not.toEqual(
      bytesOf("blk.0.attn_q.weight", buildTinyLlama({ ...TINY_LLAMA_DEFAULTS, seed: 1 })),
    );
    const a = buildLoraAdapter({ base: tiny, label: "agent" });
    const b = buildLoraAdapter({ base: tiny, label: "coding" });
    expect(bytesOf("blk.0.attn_q.weight.lora_b", a)).not.toEqual(bytesOf("blk.0.attn_q.weight.lora_b", b));
  });
});

describe("the tiny SPM vocabulary", () => {
  const vocab = buildSpmVocab(TINY_VOCAB_WORDS);
  const ids = new Map(vocab.tokens.map((token, id) => [token, id]));

  it("starts with specials and 256 byte-fallback tokens", () => {
    expect(vocab.tokens.slice(0, 5)).toEqual(["<unk>", "<s>", "</s>", "<0x00>", "<0x01>"]);
    expect(vocab.tokens[3 + 0x0a]).toBe("<0x0A>");
    expect(vocab.tokens[3 + 255]).toBe("<0xFF>");
    expect(vocab.tokenTypes.slice(0, 4)).toEqual([
      SPM_TOKEN_TYPE.unknown,
      SPM_TOKEN_TYPE.control,
      SPM_TOKEN_TYPE.control,
      SPM_TOKEN_TYPE.byte,
    ]);
    expect(new Set(vocab.tokens).size).toBe(vocab.tokens.length);
  });

  it("has the space piece and every prefix of every word piece, longer pieces scoring higher", () => {
    expect(ids.has(SPM_SPACE)).toBe(true);
    for (const word of [
      "chat",
      "agent",
      "coding",
      "genui",
      "route",
      "summary",
      "user",
      "assistant",
      "system",
    ]) {
      for (let end = 1; end <= word.length; end++) {
        expect(ids.has(SPM_SPACE + word.slice(0, end)), word.slice(0, end)).toBe(true);
      }
    }
    const scoreOf = (token: string): number => vocab.scores[ids.get(token) ?? -1] ?? Number.NaN;
    expect(scoreOf(`${SPM_SPACE}assistant`)).toBeGreaterThan(scoreOf(`${SPM_SPACE}assist`));
    expect(ids.has(`${SPM_SPACE}Hello`)).toBe(true);
  });
});
