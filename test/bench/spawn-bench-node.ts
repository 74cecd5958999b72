import { spawn } from "node:child_process";
import { REPO_ROOT } from "../harness/paths.ts";

/** A GPU node process for benchmarks: enough KV slots that placement, not capacity, decides reuse. */
export function spawnBenchNode(nodeId: string, natsUrl: string, modelEnv: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "gpu-nodes/src/main.ts"], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      MOL_LOG_LEVEL: "warn",
      MOL_NODE_ID: nodeId,
      MOL_NATS_URL: natsUrl,
      MOL_THREADS: "1",
      MOL_CONTEXT_SIZE: "4096",
      MOL_SLOTS_PER_ADAPTER: "24",
      MOL_MAX_CONCURRENT: "16",
      MOL_HEARTBEAT_INTERVAL_MS: "500",
      MOL_HEARTBEAT_TTL_MS: "3000",
      ...modelEnv,
    },
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes("ready")) resolve();
      else if (child.exitCode !== null) reject(new Error(output));
      else return;
      clearInterval(timer);
    }, 50);
  });
  return {
    ready,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
