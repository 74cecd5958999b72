/**
 * The process groups a launcher run started, kept in `<state dir>/launcher-groups.json` while it runs, so that the next
 * start of the same checkout finds what a run that could not clean up left behind (its reaper killed with it, a
 * machine suspended mid-stop) and says so before stopping it, instead of failing on a held port. A group is a
 * leftover only while its leader is the very process recorded: same pid and same start time (/proc/<pid>/stat), so
 * a pid reused since is never touched.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";

export interface RecordedGroup {
  pgid: number;
  /** What it runs (for the report): the spawned file's name. */
  command: string;
  /** The leader's start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTicks: number;
}

interface LauncherRecord {
  launcherPid: number;
  launcherStartTicks: number;
  groups: RecordedGroup[];
}

/** A process's start time, or undefined when it is gone (or not on Linux). */
export function readStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime field 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

const isSame = (pid: number, startTicks: number) => readStartTicks(pid) === startTicks;

function readRecord(path: string): LauncherRecord | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LauncherRecord;
  } catch {
    return undefined;
  }
}

export type Leftovers = { running: true; launcherPid: number } | { running: false; groups: RecordedGroup[] };

/** What an earlier run recorded that still runs; `running` when that run's launcher itself is still up. */
export function findLeftovers(path: string): Leftovers {
  const record = readRecord(path);
  if (!record) return { running: false, groups: [] };
  if (isSame(record.launcherPid, record.launcherStartTicks))
    return { running: true, launcherPid: record.launcherPid };
  return { running: false, groups: record.groups.filter((group) => isSame(group.pgid, group.startTicks)) };
}

/** This run's record, rewritten (atomically) as groups start and stop. */
export function createGroupRecord(path: string): {
  add(pgid: number, command: string): void;
  remove(pgid: number): void;
} {
  const record: LauncherRecord = {
    launcherPid: process.pid,
    launcherStartTicks: readStartTicks(process.pid) ?? 0,
    groups: [],
  };
  const save = () => {
    writeFileSync(`${path}.tmp`, JSON.stringify(record));
    renameSync(`${path}.tmp`, path);
  };
  save();
  return {
    add(pgid, command) {
      const startTicks = readStartTicks(pgid);
      if (startTicks === undefined) return;
      record.groups.push({ pgid, command, startTicks });
      save();
    },
    remove(pgid) {
      record.groups = record.groups.filter((group) => group.pgid !== pgid);
      save();
    },
  };
}
