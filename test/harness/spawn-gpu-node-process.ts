import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { inject } from "vitest";
import { adapterEnvName } from "../../gpu-nodes/src/config/node-config.ts";
import { REPO_ROOT } from "./paths.ts";

export interface GpuNodeProcess {
  nodeId: string;
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves once the node printed its ready line. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/** A real GPU node process (`gpu-nodes/src/main.ts`) on the generated tiny model. */
export function spawnGpuNodeProcess(
  nodeId: string,
  natsUrl: string,
  env: Record<string, string> = {},
): GpuNodeProcess {
  const models = inject("models");
  const child = spawn(process.execPath, ["--import", "tsx", "gpu-nodes/src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      MOL_LOG_LEVEL: "warn",
      MOL_NODE_ID: nodeId,
      MOL_NATS_URL: natsUrl,
      MOL_BASE_MODEL: models.base,
      ...Object.fromEntries(Object.entries(models.adapters).map(([id, path]) => [adapterEnvName(id), path])),
      MOL_THREADS: "1",
      MOL_CONTEXT_SIZE: "4096",
      MOL_SLOTS_PER_ADAPTER: "4",
      MOL_HEARTBEAT_INTERVAL_MS: "300",
      MOL_HEARTBEAT_TTL_MS: "1500",
      ...env,
    },
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (output.includes(`molmesh gpu node ${nodeId} ready`)) {
        clearInterval(check);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(check);
        reject(new Error(`node ${nodeId} exited: ${output}`));
      }
    }, 50);
  });
  return {
    nodeId,
    child,
    output: () => output,
    ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await exited;
    },
  };
}
