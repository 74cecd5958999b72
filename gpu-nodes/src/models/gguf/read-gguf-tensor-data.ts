import type { GgufByteSource, GgufHeader } from "./gguf-types.ts";
import { measureTensorBytes } from "./measure-gguf-tensors.ts";

/** The raw payload of one tensor, located through a previously read header. */
export async function readGgufTensorData(
  source: GgufByteSource,
  header: GgufHeader,
  tensorName: string,
): Promise<Uint8Array> {
  const tensor = header.tensors.find((t) => t.name === tensorName);
  if (!tensor) throw new Error(`tensor ${tensorName} is not in the GGUF file`);
  const start = header.dataOffset + tensor.offset;
  const length = measureTensorBytes(tensor);
  if (start + length > source.size) throw new Error(`tensor ${tensorName} runs past the end of the file`);
  return source.read(start, length);
}
