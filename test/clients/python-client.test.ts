import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { REPO_ROOT } from "../harness/paths.ts";
import { ensureClientsVenv } from "../harness/python-venv.ts";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

const run = promisify(execFile);
const FLOWS_SCRIPT = join(REPO_ROOT, "test", "python", "openai_client_flows.py");

let mesh: TestMesh;
let python: string;

beforeAll(async () => {
  // The venv (PyPI install on a first run) and the mesh start side by side.
  [python, mesh] = await Promise.all([ensureClientsVenv(), startTestMesh()]);
}, 300_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

/** Runs one flow of the Python script against the mesh; its stderr (a Python traceback) is the error. */
async function runFlow(flow: string): Promise<unknown> {
  try {
    const { stdout } = await run(python, [FLOWS_SCRIPT, flow], {
      env: { ...process.env, MOL_BASE_URL: `${mesh.edge.url}/v1`, MOL_API_KEY: TEST_API_KEY },
      timeout: 50_000,
    });
    return JSON.parse(stdout) as unknown;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `python flow ${flow} failed:\n${stderr?.trim().split("\n").slice(-8).join("\n") ?? String(error)}`,
      { cause: error },
    );
  }
}

/** What `Recipe` (the script's pydantic model) accepts, as zod. */
const recipeSchema = z.strictObject({
  title: z.string().max(24),
  servings: z.int(),
  vegetarian: z.boolean(),
  tags: z.array(z.string().max(12)).max(3),
});
const FINISHED = ["completed", "incomplete"];

describe("the official OpenAI Python client (openai + pydantic from test/python/requirements.txt)", () => {
  it("creates a response", async () => {
    const result = z
      .object({ id: z.string(), status: z.string(), output_text: z.string() })
      .parse(await runFlow("plain"));
    expect(result.id).toMatch(/^resp_/);
    expect(FINISHED).toContain(result.status);
    expect(result.output_text.length).toBeGreaterThan(0);
  });

  it("streams a response: typed events, deltas add up to the final text", async () => {
    const result = z
      .object({ events: z.array(z.string()), text: z.string(), output_text: z.string(), status: z.string() })
      .parse(await runFlow("stream"));
    expect(result.events[0]).toBe("response.created");
    expect(result.events).toContain("response.output_text.delta");
    expect(["response.completed", "response.incomplete"]).toContain(result.events.at(-1));
    expect(result.text).toBe(result.output_text);
    expect(FINISHED).toContain(result.status);
  });

  it("responses.parse with a pydantic text_format: output_parsed is the model", async () => {
    const result = z
      .object({
        id: z.string(),
        status: z.string(),
        output_text: z.string(),
        parsed: recipeSchema,
        parsed_type: z.string(),
      })
      .parse(await runFlow("parse"));
    expect(result.status).toBe("completed");
    expect(result.parsed_type).toBe("Recipe");
    expect(recipeSchema.parse(JSON.parse(result.output_text))).toEqual(result.parsed);
  });
});
