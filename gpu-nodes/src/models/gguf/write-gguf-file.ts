import { randomUUID } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { writeGguf } from "./write-gguf.ts";
import type { GgufWriteInput, GgufWriteResult } from "./write-gguf.ts";

/**
 * Streams the GGUF to a temporary sibling and renames it into place, so concurrent writers of the same
 * bytes and readers never see a half-written file.
 */
export async function writeGgufFile(path: string, input: GgufWriteInput): Promise<GgufWriteResult> {
  const temporaryPath = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temporaryPath, "w");
  try {
    const result = await writeGguf(input, {
      write: async (chunk) => {
        await handle.write(chunk);
      },
    });
    await handle.close();
    await rename(temporaryPath, path);
    return result;
  } catch (error: unknown) {
    await handle.close().catch(() => undefined);
    await rm(temporaryPath, { force: true });
    throw error;
  }
}
