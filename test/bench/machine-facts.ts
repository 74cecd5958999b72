import { execSync } from "node:child_process";
import { arch, cpus, platform, release, totalmem } from "node:os";

/** What a reader needs to judge a figure: where it was measured, and with which code. */
export function collectMachineFacts(): Record<string, string | number> {
  const commit = (() => {
    try {
      return execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] })
        .toString()
        .trim();
    } catch {
      return "unknown";
    }
  })();
  return {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    os: `${platform()} ${release()} ${arch()}`,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}
