import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The CLI as a user's shell runs it (`node --import tsx infra/cli/molmesh.ts`), with no MOL_* from this shell. */
export function spawnMolmesh(args: readonly string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("MOL_")));
  const child = spawn(process.execPath, ["--import", "tsx", "infra/cli/molmesh.ts", ...args], {
    cwd: REPO_ROOT,
    env: { ...env, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  const watchers = new Set<() => void>();
  const notify = (): void => watchers.forEach((watch) => watch());
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output.stdout += chunk;
    notify();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output.stderr += chunk;
    notify();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

  return {
    child,
    output,
    exited,
    /** Resolves once stdout contains `text`; the test's own timeout bounds the wait. */
    waitForStdout(text: string): Promise<void> {
      return new Promise((resolve) => {
        const watch = (): void => {
          if (!output.stdout.includes(text)) return;
          watchers.delete(watch);
          resolve();
        };
        watchers.add(watch);
        watch();
      });
    },
  };
}
