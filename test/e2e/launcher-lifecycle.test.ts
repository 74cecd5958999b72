import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkFreePorts } from "../../infra/local/check-free-ports.ts";
import { findFreePort } from "../harness/free-port.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { isAlive, listDescendants } from "./process-tree.ts";

/** The launcher run directly (`npm start` minus npm and its prestart install step), on free ports and the tiny model. */
interface Launch {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  ports: number[];
  /** Every descendant seen while the launcher lived: pid → command name. */
  seen: Map<number, string>;
  exited: Promise<number | null>;
  stateDir: string;
  portEnv: Record<string, number>;
}

const launches: Launch[] = [];
const stateDirs: string[] = [];
const heldPorts: Server[] = [];

afterEach(async () => {
  for (const launch of launches.splice(0)) {
    for (const pid of [launch.child.pid ?? 0, ...launch.seen.keys()])
      if (isAlive(pid)) process.kill(pid, "SIGKILL");
  }
  await Promise.all(heldPorts.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  await Promise.all(stateDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

async function launch(
  ports?: { edge?: number },
  options: { viaNpm?: boolean; again?: Launch } = {},
): Promise<Launch> {
  // `again`: the same checkout started again, on the same state directory and ports.
  const stateDir = options.again?.stateDir ?? (await mkdtemp(join(tmpdir(), "molmesh-launcher-")));
  stateDirs.push(stateDir);
  const portEnv = options.again?.portEnv ?? {
    MOL_NATS_PORT: await findFreePort(),
    MOL_NATS_WS_PORT: await findFreePort(),
    MOL_EDGE_PORT: ports?.edge ?? (await findFreePort()),
    MOL_EDGE_INSPECTOR_PORT: await findFreePort(),
    MOL_METRICS_PORT: await findFreePort(),
  };
  // Via npm: `npm run start` as a user's `npm start`, minus the prestart install step (--ignore-scripts).
  const [command, args] = options.viaNpm
    ? ["npm", ["run", "--silent", "--ignore-scripts", "start"]]
    : [process.execPath, ["--import", "tsx", "infra/local/start-mesh.ts"]];
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...Object.fromEntries(Object.entries(portEnv).map(([name, port]) => [name, String(port)])),
      MOL_STATE_DIR: stateDir,
      MOL_LOG_LEVEL: "warn",
      MOL_BASE_MODEL: "tiny",
    },
  });
  const output = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output.stdout += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (output.stderr += text));
  const seen = new Map<number, string>();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  // Descendants are polled while the launcher lives: once it is gone, its orphans can no longer be found by parent.
  // Each poll reads every live descendant's name again: a process caught between fork and exec still has its
  // parent's name (`node` for nats-server spawned from the launcher), and a name read once would keep it for good.
  const poll = setInterval(() => {
    if (child.pid === undefined) return;
    for (const pid of listDescendants(child.pid)) {
      const name = commandName(pid);
      if (name !== "?" || !seen.has(pid)) seen.set(pid, name);
    }
  }, 100);
  void exited.then(() => clearInterval(poll));
  const started: Launch = { child, output, ports: Object.values(portEnv), seen, exited, stateDir, portEnv };
  launches.push(started);
  return started;
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string, launch: Launch): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(
        `${what} not seen in ${timeoutMs} ms\nstdout:\n${launch.output.stdout.slice(-3000)}\n` +
          `stderr:\n${launch.output.stderr.slice(-3000)}\nprocesses: ${JSON.stringify([...launch.seen])}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The launcher has exited, every process it started (and theirs) is gone, and every port it took is free. */
async function expectAllGone(started: Launch, timeoutMs: number): Promise<void> {
  const remaining = () => [...started.seen].filter(([pid]) => isAlive(pid));
  await waitFor(
    // npm killed by a signal exits with a signal code, not an exit code.
    () => (started.child.exitCode !== null || started.child.signalCode !== null) && remaining().length === 0,
    timeoutMs,
    "launcher and all its processes gone",
    started,
  );
  await expect(
    checkFreePorts(started.ports.map((port) => ({ port, what: "test" }))),
  ).resolves.toBeUndefined();
}

/**
 * Until the launcher prints `line` and the sampler of its descendants has seen each of `processes`: the line can
 * come first, and a test that checks the processes were there would race its signal.
 */
async function untilLaunched(
  started: Launch,
  line: { text: string; what: string },
  processes: readonly string[],
): Promise<void> {
  await waitFor(() => started.output.stdout.includes(line.text), 240_000, line.what, started);
  await waitFor(
    () => processes.every((name) => [...started.seen.values()].includes(name)),
    5_000,
    `${processes.join(", ")} among the descendants`,
    started,
  );
}

/** Until nats-server is up, the first thing the launcher starts. */
const untilNatsServerUp = (started: Launch) =>
  untilLaunched(started, { text: "nats-server up", what: "the nats-server line" }, ["nats-server"]);

describe("the local launcher (npm start)", () => {
  it("stops nats-server, the GPU node and wrangler's workerd on SIGINT, and frees its ports", async () => {
    const started = await launch();
    await untilLaunched(started, { text: "[molmesh] ready:", what: "the ready line" }, [
      "nats-server",
      "workerd",
      "node",
    ]);
    started.child.kill("SIGINT");

    expect(await started.exited).toBe(0);
    // It returns only once every port is free: a supervisor restarting it at once finds them so.
    await expect(
      checkFreePorts(started.ports.map((port) => ({ port, what: "test" }))),
    ).resolves.toBeUndefined();
    await expectAllGone(started, 30_000);
    expect(started.output.stdout).toContain("[molmesh] stopped");
  }, 300_000);

  it("stops everything when the reader of its stdout goes away (npm start | head -1)", async () => {
    const started = await launch();
    await untilNatsServerUp(started);
    started.child.stdout?.destroy();

    // Its next line (the GPU node's) hits EPIPE; that stops the mesh instead of crashing past its children.
    await expectAllGone(started, 60_000);
    expect([...started.seen.values()]).toContain("nats-server");
    expect(started.output.stderr).not.toContain("crashed");
  }, 300_000);

  it("stops everything when npm alone gets SIGTERM (a supervisor stopping `npm start`), which npm does not pass on", async () => {
    const started = await launch(undefined, { viaNpm: true });
    await untilNatsServerUp(started);
    started.child.kill("SIGTERM");

    await expectAllGone(started, 60_000);
    expect([...started.seen.values()]).toContain("nats-server");
    expect(started.output.stderr).not.toContain("crashed");
  }, 300_000);

  it("takes every child with it when it is killed by SIGKILL, within 5 s", async () => {
    const started = await launch();
    await untilLaunched(started, { text: "[molmesh] ready:", what: "the ready line" }, [
      "nats-server",
      "workerd",
      "node",
    ]);
    const children = [...started.seen.keys()];
    started.child.kill("SIGKILL");

    await expectAllGone(started, 5_000);
    expect(children.filter(isAlive)).toEqual([]);
  }, 300_000);

  it("a start after a run killed with its reaper reports what that run left, stops it and starts", async () => {
    const first = await launch();
    await untilLaunched(first, { text: "[molmesh] ready:", what: "the ready line" }, [
      "nats-server",
      "workerd",
    ]);
    // The reaper too: nothing of the first run is left to clean up after it.
    const reaper = [...first.seen.keys()].find((pid) => commandLine(pid).includes("group-reaper-process"));
    expect(reaper).toBeDefined();
    process.kill(reaper ?? 0, "SIGKILL");
    first.child.kill("SIGKILL");
    await first.exited;
    const leftovers = [...first.seen].filter(([pid]) => isAlive(pid));
    expect(leftovers.map(([, name]) => name)).toContain("nats-server");

    const second = await launch(undefined, { again: first });
    await untilLaunched(second, { text: "[molmesh] ready:", what: "the ready line" }, ["nats-server"]);
    expect(second.output.stdout).toMatch(
      /found processes left by an earlier run that did not stop them \(pid \d+ nats-server/,
    );
    expect(leftovers.filter(([pid]) => isAlive(pid))).toEqual([]);
    second.child.kill("SIGINT");
    await expectAllGone(second, 30_000);
  }, 300_000);

  it("refuses to start on a port another process holds, naming the port and the holder", async () => {
    const held = createServer();
    heldPorts.push(held);
    const port = await findFreePort();
    await new Promise<void>((resolve) => held.listen(port, "127.0.0.1", resolve));
    const started = await launch({ edge: port });

    const code = await started.exited;
    expect(code).not.toBe(0);
    expect(started.output.stderr).toContain(
      `port ${port} for the edge (MOL_EDGE_PORT) is already in use by pid ${process.pid}`,
    );
    expect(started.output.stdout).not.toContain("ready");
    expect([...started.seen.values()]).not.toContain("nats-server");
  }, 60_000);
});
