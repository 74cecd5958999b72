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
