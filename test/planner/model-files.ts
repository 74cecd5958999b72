import { writeFile } from "node:fs/promises";
import {
  GGML_TYPE,
  measureTensorBytes,
  type GgufValue,
  type TensorShape,
} from "../../gpu-nodes/src/models/gguf/types.ts";
import { writeGgufFile } from "../../gpu-nodes/src/models/gguf/writer.ts";

const zeros = (tensor: TensorShape) => ({
  ...tensor,
  data: () => new Uint8Array(measureTensorBytes(tensor)),
});

/**
 * A llama-shaped base with three tensor types. Parameters: 32·100 + 64·32 + 32 = 5,280. Bytes: F16 6,400 +
 * Q8_0 (2048 / 32 blocks × 34) 2,176 + F32 128 = 8,704. KV per slot: 1 layer · 256 tokens · 2 KV heads ·
 * (8 + 8) · 2 bytes = 16,384.
 */
export async function writeSmallBaseGguf(path: string): Promise<void> {
  const metadata = new Map<string, GgufValue>([
    ["general.architecture", { type: "string", value: "llama" }],
    ["llama.block_count", { type: "u32", value: 1 }],
    ["llama.context_length", { type: "u32", value: 256 }],
    ["llama.embedding_length", { type: "u32", value: 32 }],
    ["llama.attention.head_count", { type: "u32", value: 4 }],
    ["llama.attention.head_count_kv", { type: "u32", value: 2 }],
  ]);
  await writeGgufFile(path, {
    metadata,
    tensors: [
      zeros({ name: "token_embd.weight", dims: [32, 100], type: GGML_TYPE.F16 }),
      zeros({ name: "blk.0.attn_q.weight", dims: [64, 32], type: GGML_TYPE.Q8_0 }),
      zeros({ name: "blk.0.attn_norm.weight", dims: [32], type: GGML_TYPE.F32 }),
    ],
  });
}

/** One rank-4 pair on a 64→32 projection: 4·64 + 4·32 = 384 parameters, F32, 1,536 bytes. */
export async function writeSmallLoraGguf(path: string): Promise<void> {
  const metadata = new Map<string, GgufValue>([
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.type", { type: "string", value: "adapter" }],
    ["adapter.type", { type: "string", value: "lora" }],
  ]);
  await writeGgufFile(path, {
    metadata,
    tensors: [
      zeros({ name: "blk.0.attn_q.weight.lora_a", dims: [64, 4], type: GGML_TYPE.F32 }),
      zeros({ name: "blk.0.attn_q.weight.lora_b", dims: [4, 32], type: GGML_TYPE.F32 }),
    ],
  });
}

/** The 8-byte little-endian header length, the JSON, then `dataBytes` of zeros. */
export async function writeSafetensors(path: string, header: object, dataBytes: number): Promise<void> {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const file = new Uint8Array(8 + json.length + dataBytes);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  await writeFile(path, file);
}
