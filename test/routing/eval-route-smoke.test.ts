import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import {
  TRAINED_ROUTER_DIR,
  trainedRouterManifestSchema,
} from "../../gpu-nodes/tools/models/find-trained-router.ts";
import { findSmollm2Model } from "../harness/find-smollm2-model.ts";
import type { RouteEvalReport } from "../bench/routing/render-route-eval.ts";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const smollm2 = findSmollm2Model();
/** The views the committed adapter was trained on: it is checked in its own format (another routes far worse). */
const trainedViews = trainedRouterManifestSchema.parse(
  JSON.parse(readFileSync(join(TRAINED_ROUTER_DIR, "manifest.json"), "utf8")),
).views ?? { family: "plain", contextTokens: 4096 };

function evalRoute(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, ["--import", "tsx", "test/bench/eval-route.ts", ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    timeout: 240_000,
  });
}

/** `npm run eval:route -- --smoke`: the CI-sized eval, through the real route hop with the committed adapter. */
describe("eval:route --smoke", () => {
  it("rejects a router it does not know before loading any model", async () => {
    await expect(evalRoute(["--routers", "oracle"])).rejects.toMatchObject({
      stderr: expect.stringMatching(/bad --routers, --sets or --limit/) as unknown,
    });
  });

  it.skipIf(smollm2 === undefined)(
    "routes the first 16 test examples; the trained l0 gets at least 12 right, each with a confidence",
    async () => {
      const out = join(mkdtempSync(join(tmpdir(), "molmesh-eval-smoke-")), "smoke");
      await evalRoute(["--smoke", "--family", trainedViews.family, "--threads", "1", "--out", out], {
        MOL_ROUTER_BASE: smollm2,
      });
      const report = JSON.parse(readFileSync(`${out}.json`, "utf8")) as RouteEvalReport;
      expect(report.views).toEqual(trainedViews);
      expect(report.results.map((r) => [r.router, r.set, r.metrics.n])).toEqual([
        ["keyword", "test", 16],
        ["trained", "test", 16],
      ]);
      const trained = report.results[1]?.metrics;
      // The committed full run got 16 of these 16 (the plain-view adapter 15 on its views); the bare base
      // (zero-shot) about one in three.
      expect(trained?.accuracy).toBeGreaterThanOrEqual(12 / 16);
      expect(trained?.hopMs?.p50).toBeGreaterThan(0);
      for (const m of report.misrouted.filter((x) => x.router === "trained")) {
        expect(m.confidence).toBeGreaterThanOrEqual(0);
        expect(m.confidence).toBeLessThanOrEqual(1);
      }
      expect(readFileSync(`${out}.md`, "utf8")).toContain("| trained | test | 16 |");
    },
    300_000,
  );
});
