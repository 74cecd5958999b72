import { createHash } from "node:crypto";
import { open } from "node:fs/promises";

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
