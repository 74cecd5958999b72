/**
 * UTF-8 sizes and clipping. Budgets are in bytes because every non-control token of a byte-level or byte-fallback
 * vocabulary covers at least one byte, so bytes are a tokenizer-independent upper bound on tokens.
 */

const encoder = new TextEncoder();

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** UTF-8 size of a string. */
export function countUtf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

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

/** Keeps `text` within `maxBytes` UTF-8 bytes, the mark included when it has to cut. */
export function clipWithMark(text: string, maxBytes: number, mark: string): string {
  if (countUtf8Bytes(text) <= maxBytes) return text;
  const markBytes = countUtf8Bytes(mark);
  if (markBytes > maxBytes) return clipUtf8Bytes(text, maxBytes);
  return clipUtf8Bytes(text, maxBytes - markBytes) + mark;
}

/**
 * Keeps `text` when it has at most `maxChars` code points; otherwise keeps the first `maxChars - 1` and
 * appends `mark`, so a reader (or a model) can tell the text went on. Code points, not UTF-16 units, so a
 * surrogate pair is never split.
 */
export function truncateCodePoints(text: string, maxChars: number, mark: string): string {
  const codePoints = Array.from(text);
  if (codePoints.length <= maxChars) return text;
  if (maxChars === 0) return "";
  return codePoints.slice(0, maxChars - 1).join("") + mark;
}

/**
 * Makes text well-formed UTF-16 (lone surrogates become U+FFFD, as TextEncoder would encode them). Without
 * this, a lone high surrogate at the end of a view could pair with text appended later, and a string prefix
 * would stop being a byte prefix.
 */
export function replaceLoneSurrogates(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
