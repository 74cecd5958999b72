import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findFreePort } from "../harness/free-port.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { isAlive, listDescendants } from "./process-tree.ts";

const KEY = "sk-e2e-start-path";
let mesh: ChildProcess;
let output = "";
let baseUrl = "";
let stateDir = "";
let metricsPort = 0;

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`${what} not seen in ${timeoutMs} ms:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "molmesh-e2e-"));
  const edgePort = await findFreePort();
  metricsPort = await findFreePort();
  baseUrl = `http://127.0.0.1:${edgePort}`;
  // Exactly what a user runs, on free ports; detached so Ctrl-C can go to its whole process group, as a terminal does.
  mesh = spawn("npm", ["start"], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      MOL_NATS_PORT: String(await findFreePort()),
      MOL_NATS_WS_PORT: String(await findFreePort()),
      MOL_EDGE_PORT: String(edgePort),
      MOL_EDGE_INSPECTOR_PORT: String(await findFreePort()),
      MOL_DEV_API_KEY: KEY,
      MOL_STATE_DIR: stateDir,
      MOL_LOG_LEVEL: "warn",
      // The fast tier serves the generated model; the default (SmolLM2) is checked by hand.
      MOL_BASE_MODEL: "tiny",
      MOL_METRICS_PORT: String(metricsPort),
    },
  });
  mesh.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  mesh.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  await waitFor(() => output.includes(`ready: ${baseUrl}`), 150_000, "the ready line");
}, 180_000);

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  if (mesh?.pid && isAlive(mesh.pid)) process.kill(-mesh.pid, "SIGKILL");
  await rm(stateDir, { recursive: true, force: true });
});

const api = (path: string, body?: unknown) =>
  fetch(`${baseUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("npm start", () => {
  it("is healthy and prints what a new user needs", async () => {
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    expect(output).toContain("weights are RANDOM");
    expect(output).toContain(`dev API key: ${KEY}`);
    expect(output).toContain("curl -s");
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    expect(output).toContain(`[local-1] molmesh gpu node local-1 metrics ${metricsUrl}`);
    expect(await (await fetch(metricsUrl)).text()).toContain('molmesh_hops_in_flight{node_id="local-1"}');
  });

  it("serves turns through the HTTP API", async () => {
    const { id } = (await (await api("/v1/conversations", {})).json()) as { id: string };
    for (const input of ["hello", "write a python function"]) {
      const response = await api("/v1/responses", { conversation: id, input, max_output_tokens: 8 });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { output: unknown[] }).output).toHaveLength(1);
    }
  });

  it("serves turns through the CLI, driven as a child process", async () => {
    const cli = (args: string[], input = "") =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "infra/cli/molmesh.ts", ...args], {
          cwd: REPO_ROOT,
          env: { ...process.env, MOL_BASE_URL: baseUrl, MOL_API_KEY: KEY },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.on("exit", (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(input);
      });
    const chat = await cli(["chat", "--json"], "hello from the cli\nand a second turn\n");
    expect(chat.code, chat.stderr).toBe(0);
    const events = chat.stdout
      .trim()
      .split("\n")
      .map(
        (line) => JSON.parse(line) as { event: string; id?: string; text?: string; mol?: { label: string } },
      );
    const turns = events.filter((e) => e.event === "turn");
    expect(turns).toHaveLength(2);
    for (const t of turns) expect(["chat", "agent", "coding", "genui"]).toContain(t.mol?.label);
    const conversationId = events.find((e) => e.event === "conversation")?.id as string;
    const items = await cli(["items", conversationId, "--order", "asc"]);
    expect(items.code, items.stderr).toBe(0);
    expect(items.stdout).toContain("hello from the cli");
    const list = await cli(["conversations"]);
    expect(list.stdout).toContain(conversationId);
  }, 60_000);

  it("stops on Ctrl-C and leaves no process behind", async () => {
    const pid = mesh.pid as number;
    const tree = listDescendants(pid);
    expect(tree.length).toBeGreaterThanOrEqual(4); // npm → start script → nats-server, GPU node, wrangler …
    process.kill(-pid, "SIGINT");
    await waitFor(() => [pid, ...tree].every((p) => !isAlive(p)), 30_000, "every process gone");
    await waitFor(() => output.includes("[molmesh] stopped"), 5_000, "the stopped line");
  }, 60_000);
});
