import type { GgufByteSource } from "../../gpu-nodes/src/models/gguf/types.ts";
import {
  writeGguf,
  type GgufWriteInput,
  type GgufWriteResult,
} from "../../gpu-nodes/src/models/gguf/writer.ts";

/** Writes a GGUF into memory, recording each chunk so tests can see the streaming. */
export async function writeGgufToMemory(
  input: GgufWriteInput,
): Promise<GgufWriteResult & { bytes: Uint8Array; chunkCount: number }> {
  const chunks: Uint8Array[] = [];
  const result = await writeGguf(input, { write: (chunk) => void chunks.push(chunk.slice()) });
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { ...result, bytes, chunkCount: chunks.length };
}

/** A byte source over memory that remembers how far it was asked to read. */
export function createMemoryByteSource(bytes: Uint8Array): GgufByteSource & { highestByteRead: number } {
  const source = {
    size: bytes.length,
    highestByteRead: 0,
    read: (offset: number, length: number): Promise<Uint8Array> => {
      source.highestByteRead = Math.max(source.highestByteRead, offset + length);
      return Promise.resolve(bytes.slice(offset, offset + length));
    },
  };
  return source;
}
