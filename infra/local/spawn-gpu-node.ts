import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { signalGroup, trackGroup } from "./process-group.ts";
import { REPO_ROOT } from "./resolve-local-models.ts";

/** A GPU node loads its model in seconds; a large real model over a slow disk may need this long. */
export const DEFAULT_GPU_NODE_READY_TIMEOUT_MS = 120_000;

export interface GpuNodeProcess {
  nodeId: string;
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves when the node prints its ready line; rejects if it exits or times out first. */
  ready: Promise<void>;
  /** SIGTERM (graceful drain); `force` resumes a stopped process and SIGKILLs it instead. */
  stop(options?: { force?: boolean }): Promise<void>;
}

/** Runs `gpu-nodes/src/main.ts` as its own process: the way `npm start`, the fleet tests and benchmarks run nodes. */
export function spawnGpuNode(options: {
  nodeId: string;
  natsUrl: string;
  env: Record<string, string | undefined>;
  onOutput?: (text: string) => void;
  readyTimeoutMs?: number;
  /** Another composition root with main.ts's ready line (the soak's scripted-engine node); default main.ts. */
  entryScript?: string;
}): GpuNodeProcess {
  const { nodeId } = options;
  // Its own process group, so the launcher decides when it stops (a terminal's Ctrl-C goes to the launcher only).
  const child = trackGroup(
    spawn(
      process.execPath,
      ["--import", "tsx", options.entryScript ?? join(REPO_ROOT, "gpu-nodes", "src", "main.ts")],
      {
        cwd: REPO_ROOT,
        env: { ...options.env, MOL_NODE_ID: nodeId, MOL_NATS_URL: options.natsUrl },
        detached: true,
      },
    ),
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    options.onOutput?.(text);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const ready = new Promise<void>((resolve, reject) => {
    const timeoutMs = options.readyTimeoutMs ?? DEFAULT_GPU_NODE_READY_TIMEOUT_MS;
    const timer = setTimeout(
      () => reject(new Error(`${nodeId} not ready in ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = () => {
      if (!output.includes(`molmesh gpu node ${nodeId} ready`)) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      resolve();
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${nodeId} exited with code ${code}:\n${output}`));
    });
  });
  ready.catch(() => undefined);
  return {
    nodeId,
    child,
    output: () => output,
    ready,
    async stop({ force = false } = {}) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      if (force) signalGroup(child.pid, "SIGCONT");
      signalGroup(child.pid, force ? "SIGKILL" : "SIGTERM");
      await exited;
    },
  };
}
