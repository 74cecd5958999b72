import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatHelp } from "../../infra/cli/cli-help.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { jsonResponse, USAGE_BY_DAY } from "./mesh-fixtures.ts";
import { startMeshServer } from "./start-mesh-server.ts";

const run = promisify(execFile);
let outDir = "";
let bin = "";

// Built by the real build script into an ignored folder of the repo, so the bin resolves the runtime dependencies
// from the repo's node_modules as an installed package does from its own.
beforeAll(async () => {
  await mkdir(join(REPO_ROOT, ".tmp"), { recursive: true });
  outDir = await mkdtemp(join(REPO_ROOT, ".tmp", "cli-dist-"));
  bin = join(outDir, "molmesh.js");
  await run(process.execPath, ["infra/cli/build-cli.mjs", "--outfile", bin], { cwd: REPO_ROOT });
}, 60_000);
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

/** The built bin by its shebang, as `npx molmesh` runs it: no tsx loader anywhere in the environment. */
function molmesh(args: string[]) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("MOL_") && name !== "NODE_OPTIONS"),
  );
  return run(bin, args, { cwd: outDir, env: { ...env, NO_COLOR: "1" } });
}

describe("the built molmesh bin", { timeout: 30_000 }, () => {
  it("runs under plain node: --help prints the general help", async () => {
    const { stdout } = await molmesh(["--help"]);
    expect(stdout).toBe(formatHelp());
  });

  it("runs a command against a real HTTP server: usage --csv", async () => {
    const server = await startMeshServer(() => jsonResponse(USAGE_BY_DAY));
    try {
      const { stdout } = await molmesh(["usage", "--group-by", "day", "--csv", "--base-url", server.url]);
      expect(server.requests[0]?.path).toBe("/v1/usage?group_by=day");
      expect(stdout.split("\n").slice(0, 2)).toEqual([
        "day,requests,input_tokens,cached_input_tokens,output_tokens,total_tokens",
        "2026-11-30,3,1200,900,80,1280",
      ]);
    } finally {
      await server.close();
    }
  });
});
