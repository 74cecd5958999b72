import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trainedRouterManifestSchema } from "../../gpu-nodes/tools/models/find-trained-router.ts";
import {
  readMisroutedNotes,
  renderRouteEvalMarkdown,
  renderRouteSummaryTable,
  type RouteEvalReport,
} from "../bench/routing/render-route-eval.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const RESULTS = join(ROOT, "test/bench/results");
const ADAPTERS = join(ROOT, "gpu-nodes/training/router/adapters");
const report = JSON.parse(readFileSync(join(RESULTS, "route-eval.json"), "utf8")) as RouteEvalReport;
const manifest = trainedRouterManifestSchema.parse(
  JSON.parse(readFileSync(join(ADAPTERS, "manifest.json"), "utf8")),
);
const notes = readMisroutedNotes(RESULTS);

/** A Markdown table's rows as trimmed cells, separator rows left out (prettier pads the docs' columns). */
function tableRows(markdown: string): string[][] {
  return markdown
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|[\s|-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
}

const result = (router: string, set: string) =>
  report.results.find((r) => r.router === router && r.set === set)?.metrics;

/** The committed figures say one thing everywhere: docs/routing.md, Markdown report, manifest, hand-read misroutes. */
describe("the committed route eval", () => {
  it("is the routing table of docs/routing.md, row for row", () => {
    const doc = readFileSync(join(ROOT, "docs/routing.md"), "utf8");
    const start = doc.indexOf("\n## Evaluation\n");
    expect(start, "docs/routing.md has an Evaluation section").toBeGreaterThanOrEqual(0);
    const end = doc.indexOf("\n## ", start + 1);
    const section = doc.slice(start, end < 0 ? undefined : end);
    const docTable = section.split("\n\n").find((block) => block.startsWith("| router"));
    expect(docTable, "docs/routing.md has a routing table").toBeDefined();
    expect(tableRows(docTable ?? "")).toEqual(tableRows(renderRouteSummaryTable(report)));
  });

  it("renders to the committed Markdown (the .md was written from this .json and these notes)", () => {
    expect(readFileSync(join(RESULTS, "route-eval.md"), "utf8")).toBe(renderRouteEvalMarkdown(report, notes));
  });

  it("agrees with the adapter manifest: the adapter file, its dev accuracy and threshold", () => {
    const adapter = readFileSync(join(ADAPTERS, manifest.adapter));
    expect(createHash("sha256").update(adapter).digest("hex")).toBe(manifest.adapterSha256);
    // Training measured dev in its own run, maybe on another CPU (or on the Q4_1 file the served Q8_0 is
    // re-encoded from), where an example near p 0.5 may tip: at most two of dev's examples apart.
    const dev = result("trained", "dev");
    expect(dev && Math.abs((manifest.devAccuracy ?? NaN) - dev.accuracy) * dev.n).toBeLessThanOrEqual(
      2 + 1e-9,
    );
    const rule = report.lowConfidence.find((l) => l.router === "trained");
    expect(manifest.minConfidence).toBe(rule?.threshold);
    expect(manifest.testAccuracy).toBe(result("trained", "test")?.accuracy);
    expect(manifest.views).toEqual(report.views);
  });

  it("explains ten of the trained router's test misroutes (all, when fewer), each one it really got wrong", () => {
    const misrouted = new Set(report.misrouted.filter((m) => m.router === "trained").map((m) => m.id));
    expect(Object.keys(notes)).toHaveLength(Math.min(10, misrouted.size));
    for (const id of Object.keys(notes)) expect(misrouted, id).toContain(id);
    const wrong = result("trained", "test");
    expect(wrong && Math.round(wrong.n * (1 - wrong.accuracy))).toBe(misrouted.size);
  });
});
