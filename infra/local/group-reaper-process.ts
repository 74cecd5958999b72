/**
 * The reaper (see group-reaper.ts), as its own process: reads `+pgid` / `-pgid` lines from stdin, the launcher's pipe,
 * and `release` when the launcher stopped its groups itself. At end of input without `release` (the launcher is gone,
 * however it went: the kernel closes its end of the pipe even under SIGKILL) it stops every group it was told of:
 * SIGTERM, then SIGKILL to what is left after the grace period, and exits once they are gone.
 */
/**
 * Short: whoever killed the launcher outright wants the mesh gone, not drained, and a supervisor that restarts it
 * at once needs the ports back (5 s at most, SIGTERM's grace and SIGKILL's reaping included, on a loaded machine).
 */
const GRACE_MS = 1_000;
const groups = new Set<number>();
let released = false;
let pending = "";

function alive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pgid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pgid, name);
  } catch {
    // Gone already.
  }
}

// Its own session, so no terminal signal reaches it; it ends with its input.
for (const name of ["SIGINT", "SIGHUP", "SIGTERM"] as const) process.on(name, () => undefined);

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  pending += chunk;
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    if (line === "release") released = true;
    else if (line.startsWith("+")) groups.add(Number(line.slice(1)));
    else if (line.startsWith("-")) groups.delete(Number(line.slice(1)));
  }
});
process.stdin.on("end", () => {
  if (released) process.exit(0);
  const live = [...groups].filter((pgid) => pgid > 1 && alive(pgid));
  for (const pgid of live) signal(pgid, "SIGTERM");
  const deadline = Date.now() + GRACE_MS;
  const timer = setInterval(() => {
    const left = live.filter(alive);
    if (left.length === 0) process.exit(0);
    if (Date.now() < deadline) return;
    for (const pgid of left) signal(pgid, "SIGKILL");
    clearInterval(timer);
    setTimeout(() => process.exit(0), 500);
  }, 50);
});
