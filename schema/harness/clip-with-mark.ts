import { clipUtf8Bytes } from "./clip-utf8-bytes.ts";
import { countUtf8Bytes } from "./count-utf8-bytes.ts";

/** Keeps `text` within `maxBytes` UTF-8 bytes, the mark included when it has to cut. */
export function clipWithMark(text: string, maxBytes: number, mark: string): string {
  if (countUtf8Bytes(text) <= maxBytes) return text;
  const markBytes = countUtf8Bytes(mark);
  if (markBytes > maxBytes) return clipUtf8Bytes(text, maxBytes);
  return clipUtf8Bytes(text, maxBytes - markBytes) + mark;
}
