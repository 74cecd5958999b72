import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFreePort } from "./free-port.ts";

export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>` for Node clients. */
  url: string;
  /** `ws://127.0.0.1:<port>` for workerd clients (`wsconnect`). */
  wsUrl: string;
  port: number;
  wsPort: number;
  /** Stops the server (SIGTERM, then SIGKILL) and keeps its ports and JetStream store for {@link start}. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and store (for restart tests). */
  start(): Promise<void>;
  /** Stops it and removes its files. */
  dispose(): Promise<void>;
}

export interface StartNatsServerOptions {
  /** Extra config appended verbatim (e.g. authorization blocks). */
  extraConfig?: string;
  readyTimeoutMs?: number;
}

const DEFAULT_READY_TIMEOUT_MS = 10_000;

/** Starts a real `nats-server` with client, WebSocket and JetStream listeners on free loopback ports. */
export async function startNatsServer(options: StartNatsServerOptions = {}): Promise<NatsServerHandle> {
  const dir = await mkdtemp(join(tmpdir(), "molmesh-nats-"));
  const [port, wsPort] = [await findFreePort(), await findFreePort()];
  const configPath = join(dir, "nats.conf");
  await writeFile(
    configPath,
    [
      `listen: "127.0.0.1:${port}"`,
      `server_name: "molmesh-test-${port}"`,
      `jetstream { store_dir: "${join(dir, "js")}", max_memory_store: 64MB, max_file_store: 256MB }`,
      `websocket { listen: "127.0.0.1:${wsPort}", no_tls: true }`,
      options.extraConfig ?? "",
    ].join("\n"),
  );
  let child: ChildProcess | undefined;
  let stderr = "";

  const start = async (): Promise<void> => {
    stderr = "";
    const proc = spawn("nats-server", ["-c", configPath], { stdio: ["ignore", "ignore", "pipe"] });
    child = proc;
    proc.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const spawnError = new Promise<never>((_, reject) => proc.once("error", reject));
    await Promise.race([
      waitForPort(port, options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS, () => stderr),
      spawnError,
    ]).catch((cause: unknown) => {
      proc.kill("SIGKILL");
      throw new Error(`nats-server did not start (is it installed? apt-get install nats-server)\n${stderr}`, {
        cause,
      });
    });
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    port,
    wsPort,
    stop,
    start,
    dispose: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, timeoutMs: number, logs: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`port ${port} not ready after ${timeoutMs} ms: ${logs()}`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
