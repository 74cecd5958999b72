import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL_CATALOG } from "../../gpu-nodes/tools/models/model-catalog.ts";
import { runCliInMemory } from "./run-cli-in-memory.ts";

let modelsDir: string;
beforeAll(async () => {
  modelsDir = await mkdtemp(join(tmpdir(), "molmesh-models-cli-"));
});
afterAll(async () => {
  await rm(modelsDir, { recursive: true, force: true });
});

describe("molmesh models", () => {
  it("exits 2 on an unknown model name and lists the catalogue, touching nothing", async () => {
    const run = await runCliInMemory({
      argv: ["models", "pull", "llama-70b"],
      env: { MOL_MODELS_DIR: modelsDir },
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("unknown model 'llama-70b'");
    for (const entry of MODEL_CATALOG) expect(run.stderr).toContain(entry.name);
    expect(run.stderr).toContain("MOL_BASE_MODEL=/path/model.gguf");
    expect(run.requests).toEqual([]);
  });

  it("lists name, size, sha256 prefix and whether each model is cached", async () => {
    const real = MODEL_CATALOG.find((entry) => entry.kind === "download");
    if (real === undefined) throw new Error("no downloadable entry");
    const before = await runCliInMemory({ argv: ["models", "list"], env: { MOL_MODELS_DIR: modelsDir } });
    expect(before.code).toBe(0);
    const row = () => before.stdout.split("\n").find((line) => line.startsWith(`${real.name} `)) ?? "";
    expect(row()).toContain("98.4 MB");
    expect(row()).toContain(real.sha256.slice(0, 12));
    expect(row()).not.toContain("cached");
    await writeFile(join(modelsDir, real.fileName), Buffer.alloc(real.bytes));
    const after = await runCliInMemory({ argv: ["models", "list"], env: { MOL_MODELS_DIR: modelsDir } });
    expect(after.stdout.split("\n").find((line) => line.startsWith(`${real.name} `))).toContain("cached");
    expect(after.stdout).toContain(`cache: ${modelsDir}`);
  });

  it("is a usage error without list or pull, or with pull and no name", async () => {
    for (const argv of [["models"], ["models", "fetch"], ["models", "pull"]]) {
      const run = await runCliInMemory({ argv });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("molmesh models --help");
    }
  });
});
