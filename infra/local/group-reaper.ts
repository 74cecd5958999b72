/**
 * What stops the launcher's process groups when the launcher cannot: under SIGKILL (a supervisor's `kill -9`, the
 * OOM killer) no handler runs, and each child leads a group of its own (process-group.ts), so nothing else would
 * reach them. Linux's PR_SET_PDEATHSIG would, per child, but Node cannot set it on a spawn, and it would not reach
 * workerd, which wrangler starts. So the launcher starts a reaper first: a small process in a session of its own
 * that holds the read end of a pipe from the launcher and is told each group as it starts and stops
 * (group-reaper-process.ts). The kernel closes the launcher's end however it dies; the reaper then stops the
 * groups. A launcher that stops its groups itself says `release` first, and the reaper leaves quietly.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Socket } from "node:net";

export interface GroupReaper {
  readonly pid: number | undefined;
  watch(pgid: number): void;
  forget(pgid: number): void;
  /** The launcher stopped its groups itself: the reaper exits without stopping anything. */
  release(): void;
}

export function startGroupReaper(): GroupReaper {
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, join(import.meta.dirname, "group-reaper-process.ts")],
    { detached: true, stdio: ["pipe", "ignore", "ignore"] },
  );
  child.unref();
  const stdin = child.stdin as (Socket & NodeJS.WritableStream) | null;
  // The pipe must not keep the launcher's event loop alive, and a reaper that died must not crash it (EPIPE).
  stdin?.unref();
  stdin?.on("error", () => undefined);
  const send = (line: string) => {
    if (stdin && !stdin.destroyed) stdin.write(`${line}\n`);
  };
  return {
    pid: child.pid,
    watch: (pgid) => send(`+${pgid}`),
    forget: (pgid) => send(`-${pgid}`),
    release: () => {
      send("release");
      stdin?.end();
    },
  };
}
