import { createHash } from "node:crypto";
import { open, stat } from "node:fs/promises";
import { join } from "node:path";

/** Bytes read from each end of a file for its fingerprint. */
const FINGERPRINT_EDGE_BYTES = 1024 * 1024;

/**
 * A revision id for a model file: SHA-256 over its size and its first and last MiB. Hashing a 70 GB base in full
 * would delay start-up by minutes; GGUF headers plus tail data change with any re-quantisation or fine-tune.
 */
export async function fingerprintFile(path: string): Promise<string> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const hash = createHash("sha256").update(String(size));
    const head = Buffer.alloc(Math.min(size, FINGERPRINT_EDGE_BYTES));
    await file.read(head, 0, head.length, 0);
    hash.update(head);
    if (size > FINGERPRINT_EDGE_BYTES) {
      const tail = Buffer.alloc(Math.min(size - head.length, FINGERPRINT_EDGE_BYTES));
      await file.read(tail, 0, tail.length, size - tail.length);
      hash.update(tail);
    }
    return `sha256:${hash.digest("hex").slice(0, 16)}`;
  } finally {
    await file.close();
  }
}

/** The weights file of a PEFT adapter folder (what vLLM loads). */
const PEFT_WEIGHTS = "adapter_model.safetensors";

/**
 * The content fingerprint of an adapter an HTTP engine server loads, when this machine can read it: a GGUF
 * file (llama-server) or a PEFT folder's weights (vLLM). Undefined when the path is not readable from here.
 */
export async function fingerprintAdapterPath(path: string): Promise<string | undefined> {
  try {
    const isFolder = (await stat(path)).isDirectory();
    return await fingerprintFile(isFolder ? join(path, PEFT_WEIGHTS) : path);
  } catch {
    return undefined;
  }
}
