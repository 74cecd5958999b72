import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnGroupLeader, stopGroup } from "./process-group.ts";
import { waitForPort } from "./wait-for-port.ts";

/** The local config shared by `npm start` and the tests: client, WebSocket and JetStream listeners. */
export const LOCAL_NATS_CONFIG = join(dirname(fileURLToPath(import.meta.url)), "..", "nats", "local.conf");
export const DEFAULT_NATS_READY_TIMEOUT_MS = 10_000;

export interface NatsServerSettings {
  configPath: string;
  port: number;
  wsPort: number;
  storeDir: string;
  readyTimeoutMs?: number;
  /** Receives nats-server's log lines (it logs to stderr). */
  onLog?: (line: string) => void;
}

export interface NatsServerProcess {
  /** Stops the server (SIGTERM, SIGKILL after 3 s). Ports and store stay for {@link start}. */
  stop(): Promise<void>;
  start(): Promise<void>;
  readonly running: boolean;
}

/** Starts `nats-server` with a config whose `$MOL_NATS_*` variables come from `settings`, and waits until it listens. */
export async function spawnNatsServer(settings: NatsServerSettings): Promise<NatsServerProcess> {
  let child: ChildProcess | undefined;
  let recent = "";

  const start = async (): Promise<void> => {
    recent = "";
    const proc = spawnGroupLeader("nats-server", ["-c", settings.configPath], {
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        MOL_NATS_PORT: String(settings.port),
        MOL_NATS_WS_PORT: String(settings.wsPort),
        MOL_NATS_STORE_DIR: settings.storeDir,
      },
    });
    child = proc;
    let announceReady: () => void = () => undefined;
    // Logged once every listener is bound: the port answering is then this server, not one that held it already.
    const announced = new Promise<void>((resolve) => (announceReady = resolve));
    proc.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      recent = (recent + text).slice(-4000);
      if (recent.includes("Server is ready")) announceReady();
      if (settings.onLog) for (const line of text.split("\n")) if (line) settings.onLog(line);
    });
    const failed = new Promise<never>((_, reject) => {
      proc.once("error", reject);
      proc.once("exit", (code) => reject(new Error(`nats-server exited with code ${code}`)));
    });
    try {
      const timeoutMs = settings.readyTimeoutMs ?? DEFAULT_NATS_READY_TIMEOUT_MS;
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no "Server is ready" in ${timeoutMs} ms`)), timeoutMs);
      });
      await Promise.race([
        Promise.all([announced, waitForPort(settings.port, timeoutMs, () => recent)]),
        failed,
        silent,
      ]).finally(() => clearTimeout(timer));
    } catch (cause) {
      await stopGroup(proc, 0);
      throw new Error(`nats-server did not start (is it installed? apt-get install nats-server)\n${recent}`, {
        cause,
      });
    }
    failed.catch(() => undefined);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await stopGroup(proc, 3_000);
  };

  await start();
  return {
    start,
    stop,
    get running() {
      return child !== undefined && child.exitCode === null;
    },
  };
}
