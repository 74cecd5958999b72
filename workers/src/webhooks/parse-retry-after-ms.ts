/** Longest `retry-after` we honour: a receiver cannot park a delivery beyond the schedule's longest step. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** `retry-after` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
export function parseRetryAfterMs(value: string, now: number): number | undefined {
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // Only IMF-fixdate (what RFC 9110 senders must emit): Date.parse alone would read "-5" as the year 5 BC.
    if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
    const date = Date.parse(text);
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}
