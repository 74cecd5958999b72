import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_NATS_CONFIG, spawnNatsServer } from "../../infra/local/spawn-nats-server.ts";
import { findFreePort } from "./free-port.ts";

export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>` for Node clients. */
  url: string;
  /** `ws://127.0.0.1:<port>` for workerd clients (`wsconnect`). */
  wsUrl: string;
  port: number;
  wsPort: number;
  /** Stops the server; ports and JetStream store stay for {@link start} (restart tests). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  dispose(): Promise<void>;
}

/**
 * Starts a real `nats-server` on free loopback ports with the project's own local config (infra/nats/local.conf),
 * so the tests also prove that config. `extraConfig` is appended (e.g. authorization blocks).
 */
export async function startNatsServer(options: { extraConfig?: string } = {}): Promise<NatsServerHandle> {
  const dir = await mkdtemp(join(tmpdir(), "molmesh-nats-"));
  const [port, wsPort] = [await findFreePort(), await findFreePort()];
  let configPath = LOCAL_NATS_CONFIG;
  if (options.extraConfig) {
    configPath = join(dir, "nats.conf");
    await writeFile(configPath, `${await readFile(LOCAL_NATS_CONFIG, "utf8")}\n${options.extraConfig}\n`);
  }
  const server = await spawnNatsServer({ configPath, port, wsPort, storeDir: join(dir, "js") });
  return {
    url: `nats://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    port,
    wsPort,
    stop: () => server.stop(),
    start: () => server.start(),
    dispose: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
