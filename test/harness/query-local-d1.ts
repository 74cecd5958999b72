import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./paths.ts";

const run = promisify(execFile);

/** Reads the local D1 database the way an operator would (`wrangler d1 execute --local`), to see what is stored. */
export async function queryLocalD1(persistDir: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const wrangler = join(REPO_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  const args = [
    wrangler,
    "d1",
    "execute",
    "DB",
    "--local",
    "--persist-to",
    persistDir,
    "--json",
    "--command",
    sql,
  ];
  const { stdout } = await run(process.execPath, [...args, "--config", join(REPO_ROOT, "wrangler.toml")], {
    cwd: REPO_ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
  });
  const [result] = JSON.parse(stdout) as Array<{ results: Array<Record<string, unknown>> }>;
  return result?.results ?? [];
}
