import { GgufNeedMoreBytesError } from "./byte-reader.ts";
import type { GgufByteSource, GgufHeader } from "./gguf-types.ts";
import { parseGgufHeader } from "./parse-gguf-header.ts";

/** Enough for a small model's header in one read; 32k-vocab headers (~1 MB of tokens) take a few more. */
export const DEFAULT_HEADER_WINDOW_BYTES = 256 * 1024;

/** Parses the header from a growing prefix of the source, never reading tensor data past it. */
export async function readGgufHeader(
  source: GgufByteSource,
  options: { initialWindowBytes?: number } = {},
): Promise<GgufHeader> {
  let window = await source.read(
    0,
    Math.min(options.initialWindowBytes ?? DEFAULT_HEADER_WINDOW_BYTES, source.size),
  );
  for (;;) {
    try {
      return parseGgufHeader(window, source.size);
    } catch (error: unknown) {
      if (!(error instanceof GgufNeedMoreBytesError)) throw error;
      const nextLength = Math.min(source.size, Math.max(window.length * 2, error.neededBytes));
      window = concatBytes(window, await source.read(window.length, nextLength - window.length));
    }
  }
}

function concatBytes(head: Uint8Array, tail: Uint8Array): Uint8Array {
  const joined = new Uint8Array(head.length + tail.length);
  joined.set(head);
  joined.set(tail, head.length);
  return joined;
}
