/**
 * Local processes (nats-server, GPU nodes, wrangler dev) each lead a process group of their own, so that stopping one
 * stops what it started too (wrangler's workerd), and a terminal's Ctrl-C reaches only the launcher, which then
 * stops them in order. No library: tree-kill and fkill walk `ps` output, while a process group is one `kill(2)`
 * away (`process.kill(-pgid)`) and also reaches a grandchild whose parent has already gone.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

/** Group leaders spawned by this process whose groups may still have members; killed on exit (see below). */
const liveGroups = new Set<number>();

/** Told of each group as it is tracked and as it is seen gone: the reaper and the leftovers record (start-mesh.ts). */
export interface GroupWatcher {
  watch(pgid: number, command: string): void;
  forget(pgid: number): void;
}
const watchers: GroupWatcher[] = [];

export function addGroupWatcher(watcher: GroupWatcher): void {
  watchers.push(watcher);
}

/** `spawn` with the child as the leader of a new process group (and session: `detached`). */
export function spawnGroupLeader(
  command: string,
  args: readonly string[],
  options: Omit<SpawnOptions, "detached">,
): ChildProcess {
  return trackGroup(spawn(command, [...args], { ...options, detached: true }));
}

/** Counts a child spawned with `detached: true` among the groups {@link killAllGroupsNow} kills. */
export function trackGroup<T extends ChildProcess>(child: T): T {
  const pgid = child.pid;
  if (pgid !== undefined) {
    liveGroups.add(pgid);
    const command = child.spawnfile.split("/").at(-1) ?? child.spawnfile;
    for (const watcher of watchers) watcher.watch(pgid, command);
  }
  return child;
}

function untrack(pgid: number): void {
  if (!liveGroups.delete(pgid)) return;
  for (const watcher of watchers) watcher.forget(pgid);
}

/** Sends `signal` to every process of the group `pgid`; false when none is left (ESRCH). */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") {
      untrack(pgid);
      return false;
    }
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM to the whole group, SIGKILL to whatever of it is left after `graceMs`. Resolves once the leader has exited
 * and no member of the group is left, so its ports are free when this returns.
 */
export async function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  const leaderExited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (!signalGroup(pgid, "SIGTERM")) {
    await leaderExited;
    return;
  }
  const deadline = Date.now() + graceMs;
  let exited = false;
  void leaderExited.then(() => {
    exited = true;
  });
  const groupGone = () => exited && !signalGroup(pgid, 0);
  while (Date.now() < deadline && !groupGone()) await sleep(50);
  signalGroup(pgid, "SIGKILL");
  await leaderExited;
  // A member killed by SIGKILL disappears from the group a moment after the signal.
  for (let i = 0; i < 40 && signalGroup(pgid, 0); i++) await sleep(25);
}

/**
 * Stops groups this process did not start (a killed run's leftovers): SIGTERM, then SIGKILL after `graceMs`;
 * resolves once none is left.
 */
export async function stopForeignGroups(pgids: readonly number[], graceMs: number): Promise<void> {
  const alive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const send = (pgid: number, signal: NodeJS.Signals) => {
    try {
      process.kill(-pgid, signal);
    } catch {
      // Gone already.
    }
  };
  for (const pgid of pgids) send(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && pgids.some(alive)) await sleep(50);
  for (const pgid of pgids.filter(alive)) send(pgid, "SIGKILL");
  for (let i = 0; i < 40 && pgids.some(alive); i++) await sleep(25);
}

/**
 * SIGKILL to every group this process started and has not seen gone. Synchronous, so it can run in an `exit` listener:
 * a launcher that crashes (uncaught error, EPIPE on stdout) still takes its children with it.
 */
export function killAllGroupsNow(): void {
  for (const pgid of [...liveGroups]) signalGroup(pgid, "SIGKILL");
}
