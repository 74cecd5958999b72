import { open } from "node:fs/promises";
import { readGgufFileInfo, type GgufFileInfo } from "node-llama-cpp";
import { measureGgufTensors } from "../../src/models/gguf/types.ts";
import type { KvCacheShape } from "./plan-storage.ts";
import { readSafetensorsFileHeader } from "./safetensors-header.ts";

export type ModelFileFormat = "gguf" | "safetensors";

export interface MeasuredModelFile {
  path: string;
  format: ModelFileFormat;
  parameters: number;
  /** Tensor payload bytes as stored (quantized sizes for GGUF), without header or padding. */
  bytes: number;
  /** From GGUF metadata only: safetensors headers carry no attention shape. */
  kvCache?: KvCacheShape;
}

/** The vocabulary arrays are most of a header's bytes and say nothing about size or attention shape. */
const UNNEEDED_GGUF_KEYS = [
  "tokenizer.ggml.tokens",
  "tokenizer.ggml.scores",
  "tokenizer.ggml.token_type",
  "tokenizer.ggml.merges",
];

/** GGUF has a magic; safetensors starts with its header length, then the JSON's opening brace. */
async function sniffModelFormat(path: string): Promise<ModelFileFormat> {
  const handle = await open(path, "r");
  try {
    const head = new Uint8Array(9);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead >= 4 && new TextDecoder().decode(head.subarray(0, 4)) === "GGUF") return "gguf";
    if (bytesRead === 9 && head[8] === "{".charCodeAt(0)) return "safetensors";
    throw new Error(`${path} is neither a GGUF nor a safetensors file`);
  } finally {
    await handle.close();
  }
}

/** One count per model: a per-layer list (some architectures vary it) has no single KV shape. */
function readCount(value: number | readonly number[] | undefined, key: string): number | undefined {
  if (typeof value === "object") throw new Error(`GGUF metadata ${key} is a array, not a number`);
  return value;
}

/** The attention shape from a base model's GGUF metadata; undefined for adapters and incomplete headers. */
export function readKvCacheShape(info: Pick<GgufFileInfo, "architectureMetadata">): KvCacheShape | undefined {
  const arch = info.architectureMetadata;
  const layers = arch.block_count;
  const context = arch.context_length;
  const embedding = arch.embedding_length;
  const heads = readCount(arch.attention?.head_count, "attention.head_count");
  if (layers === undefined || context === undefined || embedding === undefined || heads === undefined) {
    return undefined;
  }
  const headLength = embedding / heads;
  return {
    layers,
    kvHeads: readCount(arch.attention?.head_count_kv, "attention.head_count_kv") ?? heads,
    keyLength: arch.attention?.key_length ?? headLength,
    valueLength: arch.attention?.value_length ?? headLength,
    context,
  };
}

/** Parameter count and stored bytes from the file's header alone. */
export async function measureModelFile(path: string): Promise<MeasuredModelFile> {
  const format = await sniffModelFormat(path);
  if (format === "safetensors") {
    const { tensors } = await readSafetensorsFileHeader(path);
    return {
      path,
      format,
      parameters: tensors.reduce((sum, tensor) => sum + tensor.parameters, 0),
      bytes: tensors.reduce((sum, tensor) => sum + tensor.bytes, 0),
    };
  }
  // node-llama-cpp reads the header only (and splices the parts of a split model).
  const info = await readGgufFileInfo(path, {
    sourceType: "filesystem",
    ignoreKeys: UNNEEDED_GGUF_KEYS,
    logWarnings: false,
  });
  const totals = measureGgufTensors(
    (info.fullTensorInfo ?? []).map((tensor) => ({
      name: tensor.name,
      dims: tensor.dimensions.map(Number),
      type: tensor.ggmlType,
    })),
  );
  const measured: MeasuredModelFile = {
    path,
    format,
    parameters: totals.totalParameters,
    bytes: totals.totalBytes,
  };
  const kvCache = readKvCacheShape(info);
  if (kvCache !== undefined) measured.kvCache = kvCache;
  return measured;
}
