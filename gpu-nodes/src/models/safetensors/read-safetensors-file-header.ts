import { open } from "node:fs/promises";
import { parseSafetensorsHeader, type SafetensorsHeader } from "./parse-safetensors-header.ts";

const LENGTH_PREFIX_BYTES = 8;
/** The reference implementation refuses headers over 100 MB; a bigger prefix means a corrupt file. */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/** Reads the length prefix and the JSON header only; tensor data is never touched. */
export async function readSafetensorsFileHeader(path: string): Promise<SafetensorsHeader> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const prefix = new Uint8Array(LENGTH_PREFIX_BYTES);
    await readExactly(handle, prefix, 0, path);
    const length = new DataView(prefix.buffer).getBigUint64(0, true);
    if (length > BigInt(Math.min(MAX_SAFETENSORS_HEADER_BYTES, size - LENGTH_PREFIX_BYTES))) {
      throw new Error(`${path}: safetensors header length ${length} exceeds the file or the 100 MB limit`);
    }
    const json = new Uint8Array(Number(length));
    await readExactly(handle, json, LENGTH_PREFIX_BYTES, path);
    return parseSafetensorsHeader(new TextDecoder().decode(json));
  } finally {
    await handle.close();
  }
}

async function readExactly(
  handle: Awaited<ReturnType<typeof open>>,
  buffer: Uint8Array,
  position: number,
  path: string,
): Promise<void> {
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
  if (bytesRead !== buffer.length) throw new Error(`${path}: file is truncated at byte ${position}`);
}
