import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";
import { ensureSchemathesisVenv } from "../harness/python-venv.ts";
import { TEST_ADMIN_TOKEN, TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * The OpenAPI document against the running edge: schemathesis generates requests from `GET /openapi.json` and
 * checks every answer (`--checks all`: no server error, only documented statuses and content types, bodies that
 * match their schemas, schema-valid requests accepted and invalid ones refused, 405 with `Allow` for undeclared
 * methods, 401 without a key, …). The mesh has a GPU node, so turns run and `/readyz` is ready. Every operation
 * of the document is tested, none excluded; test/python/schemathesis_hooks.py lists the request rules a JSON
 * Schema cannot state (for which a schema-valid request is refused, as OpenAI refuses it), each with its reason.
 */

/** Per operation; with the coverage phase's own cases and the stateful phase, about 2 minutes on the CI box. */
const MAX_EXAMPLES = 20;
const SEED = 20_261_205;
const PYTHON_DIR = join(REPO_ROOT, "test", "python");

let mesh: TestMesh;
let schemathesisBin: string;

beforeAll(async () => {
  [schemathesisBin, mesh] = await Promise.all([
    ensureSchemathesisVenv(),
    // Background turns run on while the next requests arrive: a roomy queue keeps a contract check from becoming
    // a load test (an `overloaded` 503 is documented, but `not_a_server_error` fails on any 5xx).
    startTestMesh({ adminToken: TEST_ADMIN_TOKEN, nodeOptions: { maxWaitingPerAdapter: 32 } }),
  ]);
}, 600_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

function runSchemathesis(baseUrl: string): Promise<{ code: number | null; output: string }> {
  const args = [
    "--config-file",
    join(PYTHON_DIR, "schemathesis.toml"),
    "run",
    `${baseUrl}/openapi.json`,
    "--url",
    baseUrl,
    "--checks",
    "all",
    "--seed",
    String(SEED),
    "--max-examples",
    String(MAX_EXAMPLES),
    // One request at a time: a run is then the same sequence each time, and never queues turns on the node.
    "--workers",
    "1",
    "--no-color",
  ];
  const child = spawn(join(schemathesisBin, "schemathesis"), args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      MOL_TEST_API_KEY: TEST_API_KEY,
      MOL_TEST_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SCHEMATHESIS_HOOKS: join(PYTHON_DIR, "schemathesis_hooks.py"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("the OpenAPI document against the edge (schemathesis)", () => {
  it("finds no failure, and tests every documented operation", async () => {
    const document = (await (await fetch(`${mesh.edge.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
    const { code, output } = await runSchemathesis(mesh.edge.url);
    const tail = output.slice(-12_000);
    expect(output, tail).toContain(`Tested: ${operations}`);
    expect(output, tail).not.toMatch(/\d+ failures?\b/);
    expect(code, tail).toBe(0);
    // The run's figures (cases generated, failures dropped as beyond the schema, time) for the test log.
    console.log(output.slice(output.lastIndexOf("API Operations:")));
  }, 420_000);
});
