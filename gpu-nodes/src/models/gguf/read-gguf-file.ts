import { open } from "node:fs/promises";
import type { GgufByteSource, GgufHeader } from "./gguf-types.ts";
import { readGgufHeader } from "./read-gguf-header.ts";
import { readGgufTensorData } from "./read-gguf-tensor-data.ts";

/** Runs `use` with a byte source over the file, closing the handle afterwards. */
export async function withGgufFileSource<T>(
  path: string,
  use: (source: GgufByteSource) => Promise<T>,
): Promise<T> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const source: GgufByteSource = {
      size,
      read: async (offset, length) => {
        const buffer = new Uint8Array(length);
        const { bytesRead } = await handle.read(buffer, 0, length, offset);
        if (bytesRead !== length)
          throw new Error(`short read of ${path} at ${offset}: ${bytesRead}/${length}`);
        return buffer;
      },
    };
    return await use(source);
  } finally {
    await handle.close();
  }
}

export function readGgufFileHeader(path: string): Promise<GgufHeader> {
  return withGgufFileSource(path, (source) => readGgufHeader(source));
}

export function readGgufFileTensor(path: string, tensorName: string): Promise<Uint8Array> {
  return withGgufFileSource(path, async (source) =>
    readGgufTensorData(source, await readGgufHeader(source), tensorName),
  );
}
