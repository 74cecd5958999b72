import { countUtf8Bytes } from "./count-utf8-bytes.ts";

/** Longest prefix of `text` (whole code points) whose UTF-8 size is at most `maxBytes`. */
export function clipUtf8Bytes(text: string, maxBytes: number): string {
  if (countUtf8Bytes(text) <= maxBytes) return text;
  let used = 0;
  let end = 0;
  for (const codePoint of text) {
    const size = countUtf8Bytes(codePoint);
    if (used + size > maxBytes) break;
    used += size;
    end += codePoint.length;
  }
  return text.slice(0, end);
}
