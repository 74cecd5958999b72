import { getGgufNumber } from "../../gpu-nodes/src/models/gguf/types.ts";
import { readGgufFileHeader } from "../../gpu-nodes/src/models/gguf/reader.ts";

/** llama.cpp's default KV cache type is f16: 2 bytes per element. */
const KV_BYTES_PER_ELEMENT = 2;

/** Bytes of K and V one slot of `contextSize` tokens holds, from the model's own hyper-parameters. */
export async function measureKvBytesPerSlot(modelPath: string, contextSize: number): Promise<number> {
  const { metadata } = await readGgufFileHeader(modelPath);
  const arch = "llama";
  const layers = getGgufNumber(metadata, `${arch}.block_count`);
  const embd = getGgufNumber(metadata, `${arch}.embedding_length`);
  const heads = getGgufNumber(metadata, `${arch}.attention.head_count`);
  const kvHeads = metadata.has(`${arch}.attention.head_count_kv`)
    ? getGgufNumber(metadata, `${arch}.attention.head_count_kv`)
    : heads;
  const kvWidth = (embd / heads) * kvHeads;
  return 2 * layers * contextSize * kvWidth * KV_BYTES_PER_ELEMENT;
}
