/**
 * UTF-8 sizes and clipping. Budgets are in bytes because every non-control token of a byte-level or byte-fallback
 * vocabulary covers at least one byte, so bytes are a tokenizer-independent upper bound on tokens.
 */

const encoder = new TextEncoder();

/** The sentinels that mark template special tokens (chat-templates.ts); client text never keeps them. */
const SPECIAL_SENTINELS = /[\uE000\uE001]/g;

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

/** The longest suffix of `text` (whole code points) whose UTF-8 size is at most `maxBytes`. */
export function clipUtf8BytesFromEnd(text: string, maxBytes: number): string {
  if (countUtf8Bytes(text) <= maxBytes) return text;
  const codePoints = Array.from(text);
  let used = 0;
  let start = codePoints.length;
  while (start > 0) {
    const size = countUtf8Bytes(codePoints[start - 1] ?? "");
    if (used + size > maxBytes) break;
    used += size;
    start -= 1;
  }
  return codePoints.slice(start).join("");
}

/**
 * Keeps `text` within `maxBytes` UTF-8 bytes by cutting its middle: the first half of what fits, `mark`, then
 * the last half. Long pasted input (a stack trace, a log) says the most at its two ends: the error and the
 * frames nearest it, or the command and its final output.
 */
export function clipMiddleWithMark(text: string, maxBytes: number, mark: string): string {
  if (countUtf8Bytes(text) <= maxBytes) return text;
  const keptBytes = maxBytes - countUtf8Bytes(mark);
  if (keptBytes <= 0) return clipUtf8Bytes(text, maxBytes);
  const head = clipUtf8Bytes(text, Math.ceil(keptBytes / 2));
  const tail = clipUtf8BytesFromEnd(text.slice(head.length), keptBytes - countUtf8Bytes(head));
  return head + mark + tail;
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

/**
 * Any text from outside the harness (a client's message, a model's answer) as views may hold it: well-formed
 * UTF-16, and without the sentinels that mark a template's special tokens, so it can never open a turn.
 */
export function cleanConversationText(text: string): string {
  // Sentinels first: a surrogate pair split by one is whole again, as if the sentinel had never been sent.
  return replaceLoneSurrogates(text.replace(SPECIAL_SENTINELS, ""));
}
