import { open } from "node:fs/promises";
import { measureGgufTensors } from "../models/gguf/types.ts";
import { readGgufFileHeader } from "../models/gguf/reader.ts";
import { readSafetensorsFileHeader } from "../models/safetensors/read-safetensors-file-header.ts";
import { readKvCacheShape, type KvCacheShape } from "./estimate-kv-cache-bytes.ts";

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
  const header = await readGgufFileHeader(path);
  const totals = measureGgufTensors(header.tensors);
  const measured: MeasuredModelFile = {
    path,
    format,
    parameters: totals.totalParameters,
    bytes: totals.totalBytes,
  };
  const kvCache = readKvCacheShape(header.metadata);
  if (kvCache !== undefined) measured.kvCache = kvCache;
  return measured;
}
