import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { spawnGroupLeader, stopGroup } from "./process-group.ts";
import { REPO_ROOT } from "./resolve-local-models.ts";

export interface EdgeSettings {
  port: number;
  /** wrangler's inspector needs its own port, or two dev servers on one machine collide. */
  inspectorPort: number;
  natsWsUrl: string;
  devApiKey: string;
  /** The admin API's token (Worker var MOL_ADMIN_TOKEN); without it /v1/admin/* answers 403. */
  adminToken?: string;
  /** Where local Durable Object and D1 state lives (wrangler `--persist-to`). */
  persistDir: string;
  readyTimeoutMs?: number;
  onLog?: (line: string) => void;
  /** Extra Worker vars (e.g. MOL_HOP_STALL_TIMEOUT_MS). */
  vars?: Record<string, string>;
}

export interface EdgeProcess {
  url: string;
  stop(): Promise<void>;
}

const DEFAULT_EDGE_READY_TIMEOUT_MS = 60_000;

const WRANGLER = join(REPO_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const WRANGLER_ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

/** Applies the D1 migrations (workers/src/db/migrations/d1) to the local database under `persistDir`. */
export async function applyLocalD1Migrations(persistDir: string): Promise<void> {
  const args = [WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir];
  const child = spawnGroupLeader(process.execPath, [...args, "--config", join(REPO_ROOT, "wrangler.toml")], {
    cwd: REPO_ROOT,
    env: WRANGLER_ENV,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`wrangler d1 migrations apply failed (${code}):\n${output}`);
}

/** Runs the edge Worker in workerd through `wrangler dev` (local Durable Objects and D1), as `npm start` does. */
export async function spawnEdge(settings: EdgeSettings): Promise<EdgeProcess> {
  await applyLocalD1Migrations(settings.persistDir);
  const wrangler = WRANGLER;
  // Echoed by /livez: only the Worker this call started knows it, so another server on the port never passes.
  const launchId = randomUUID();
  const args = [
    wrangler,
    "dev",
    "--config",
    join(REPO_ROOT, "wrangler.toml"),
    "--ip",
    "127.0.0.1",
    "--port",
    String(settings.port),
    "--inspector-port",
    String(settings.inspectorPort),
    "--persist-to",
    settings.persistDir,
    "--show-interactive-dev-session=false",
    "--log-level",
    process.env.MOL_EDGE_LOG_LEVEL ?? "warn",
    "--var",
    `MOL_NATS_WS_URL:${settings.natsWsUrl}`,
    "--var",
    `MOL_DEV_API_KEY:${settings.devApiKey}`,
    "--var",
    `MOL_LAUNCH_ID:${launchId}`,
    ...(settings.adminToken ? ["--var", `MOL_ADMIN_TOKEN:${settings.adminToken}`] : []),
    ...Object.entries(settings.vars ?? {}).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  // wrangler runs workerd as its child: stopping wrangler's process group stops workerd too.
  const child: ChildProcess = spawnGroupLeader(process.execPath, args, {
    cwd: REPO_ROOT,
    env: WRANGLER_ENV,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let recent = "";
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    recent = (recent + text).slice(-6000);
    if (settings.onLog) for (const line of text.split("\n")) if (line.trim()) settings.onLog(line);
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const url = `http://127.0.0.1:${settings.port}`;
  const stop = (): Promise<void> => stopGroup(child, 5_000);
  try {
    await waitForEdge(url, launchId, settings.readyTimeoutMs ?? DEFAULT_EDGE_READY_TIMEOUT_MS, child);
  } catch (error) {
    await stop();
    throw new Error(`wrangler dev did not start: ${String(error)}\n${recent}`, { cause: error });
  }
  return { url, stop };
}

async function waitForEdge(baseUrl: string, launchId: string, timeoutMs: number, child: ChildProcess) {
  const url = `${baseUrl}/livez`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      // Anything else on this port (another process, another molmesh edge that took it first) is not this edge, and
      // the wait goes on until wrangler's own exit says why.
      if (response.headers.get("x-mol-launch-id") === launchId) return;
      await new Promise((r) => setTimeout(r, 200));
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`no answer from ${url} after ${timeoutMs} ms`);
}
