import type { UsageBucket, UsageGroupBy, UsageQuery } from "../../usage/usage-report.ts";

/** The field a row's group value is under: what the API calls each split elsewhere. */
const GROUP_FIELDS = { user: "user", key: "key_id", day: "day", adapter: "adapter" } as const;
const FIGURES = ["requests", "input_tokens", "cached_input_tokens", "output_tokens", "total_tokens"] as const;

type UsageRow = Partial<Record<(typeof GROUP_FIELDS)[UsageGroupBy], string | null>> &
  Record<(typeof FIGURES)[number], number> & { object: "usage.bucket"; hops: number };

function formatRow(groupBy: UsageGroupBy, bucket: UsageBucket): UsageRow {
  // Requests that named no end user are their own group; JSON shows it as null.
  const group = groupBy === "user" && bucket.group === "" ? null : bucket.group;
  return {
    object: "usage.bucket",
    [GROUP_FIELDS[groupBy]]: group,
    requests: bucket.requests,
    hops: bucket.hops,
    input_tokens: bucket.inputTokens,
    cached_input_tokens: bucket.cachedInputTokens,
    output_tokens: bucket.outputTokens,
    total_tokens: bucket.inputTokens + bucket.outputTokens,
  };
}

/** `{object: "list", group_by, from, to, data}`: every group at once (one per user, key, day or adapter). */
export function formatUsageReport(query: UsageQuery, buckets: readonly UsageBucket[]) {
  return {
    object: "list" as const,
    group_by: query.groupBy,
    from: query.from ?? null,
    to: query.to ?? null,
    data: buckets.map((bucket) => formatRow(query.groupBy, bucket)),
    has_more: false,
  };
}

/** RFC 4180: a header line, then one line per group; fields quoted when they hold a comma, quote or line break. */
export function formatUsageReportCsv(query: UsageQuery, buckets: readonly UsageBucket[]): string {
  const header = [GROUP_FIELDS[query.groupBy], ...FIGURES];
  const lines = buckets.map((bucket) => {
    const row = formatRow(query.groupBy, bucket);
    return [escapeCsv(bucket.group), ...FIGURES.map((figure) => String(row[figure]))].join(",");
  });
  return [header.join(","), ...lines].map((line) => `${line}\r\n`).join("");
}

/** A value a spreadsheet would run as a formula (`=`, `+`, `-`, `@`) is prefixed with `'`, as OWASP advises. */
function escapeCsv(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
