import { describe, expect, it } from "vitest";
import type { AppDeps } from "../../workers/src/app/app-deps.ts";
import { createApp } from "../../workers/src/app/create-app.ts";
import { formatUsageReport, formatUsageReportCsv } from "../../workers/src/api/format/format-usage-report.ts";

const bucket = (group: string) => ({
  group,
  requests: 2,
  hops: 5,
  inputTokens: 30,
  cachedInputTokens: 12,
  outputTokens: 7,
});

describe("usage reports", () => {
  it("are documented in /openapi.json with their query parameters", async () => {
    const app = createApp(() => ({ now: () => Date.now() }) as unknown as AppDeps);
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string; in: string }> } }>;
    };
    for (const path of ["/v1/usage", "/v1/admin/tenants/{id}/usage"]) {
      const names = (document.paths[path]?.get?.parameters ?? []).map((p) => `${p.in}:${p.name}`);
      expect(names, path).toEqual(
        expect.arrayContaining(["query:group_by", "query:from", "query:to", "query:format"]),
      );
    }
  });

  it("show a request without an end user as null in JSON and empty in CSV", () => {
    const query = { groupBy: "user" as const };
    expect(formatUsageReport(query, [bucket(""), bucket("alice")]).data).toEqual([
      {
        object: "usage.bucket",
        user: null,
        requests: 2,
        hops: 5,
        input_tokens: 30,
        cached_input_tokens: 12,
        output_tokens: 7,
        total_tokens: 37,
      },
      expect.objectContaining({ user: "alice", total_tokens: 37 }),
    ]);
    expect(formatUsageReportCsv(query, [bucket("")])).toBe(
      "user,requests,input_tokens,cached_input_tokens,output_tokens,total_tokens\r\n,2,30,12,7,37\r\n",
    );
  });

  it("quote CSV fields per RFC 4180 and defuse spreadsheet formulas in end-user ids", () => {
    const csv = formatUsageReportCsv({ groupBy: "user" }, [bucket('a,"b"'), bucket("=HYPERLINK(1)")]);
    expect(csv.split("\r\n").slice(1, 3)).toEqual([`"a,""b""",2,30,12,7,37`, `'=HYPERLINK(1),2,30,12,7,37`]);
  });
});
