import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "../harness/paths.ts";
import { isBenchProgress, type BenchProgress } from "./report-bench-progress.ts";

export interface BenchProcessResult {
  exitCode: number | null;
  timedOut: boolean;
  seconds: number;
  /** stdout and stderr together, for the failure message. */
  output: string;
}

/**
 * Runs one benchmark script in its own Node process, as `npm run bench:<name>` would, with an IPC channel for
 * progress. Its own process group, so a timeout takes down what it started too (wrangler, nats-server, nodes).
 */
export async function runBenchProcess(o: {
  script: string;
  env: Record<string, string>;
  timeoutMs: number;
  onProgress: (progress: BenchProgress) => void;
}): Promise<BenchProcessResult> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "test", "bench", o.script)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...o.env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    detached: true,
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    // The tail is what explains a failure; a 5,000-turn run's progress lines are not.
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.on("message", (message: unknown) => {
    if (isBenchProgress(message)) o.onProgress(message);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) stopProcessTree(child.pid);
  }, o.timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  return { exitCode, timedOut, seconds: (performance.now() - started) / 1000, output };
}

/**
 * Stops a benchmark and everything under it. Some of what it starts runs in a process group of its own (wrangler
 * is spawned detached), so killing the benchmark's group alone would leave workerd behind.
 */
function stopProcessTree(root: number): void {
  const table = execFileSync("ps", ["-A", "-o", "pid=,ppid="]).toString();
  const children = new Map<number, number[]>();
  for (const line of table.trim().split("\n")) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  for (const pid of tree.reverse()) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  }
}
