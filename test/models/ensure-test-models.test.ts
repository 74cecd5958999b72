import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  TEST_ADAPTER_LABELS,
  ensureTestModels,
  hashWholeFile,
  resolveTestModelDefaults,
  type TestModelPaths,
} from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { readGgufFileHeader } from "../../gpu-nodes/src/models/gguf/reader.ts";

const { fixturePath } = resolveTestModelDefaults();
const hasFixture = existsSync(fixturePath);

function listFiles(paths: TestModelPaths): string[] {
  return [paths.base, ...Object.values(paths.adapters), ...Object.values(paths.fixture?.adapters ?? {})];
}

describe("ensureTestModels", () => {
  let workDir: string;
  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), "molmesh-models-"));
  });
  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it("writes the base and one LoRA per label, with the agreed file names", async () => {
    const outDir = join(workDir, "names");
    const paths = await ensureTestModels({ outDir, fixturePath });
    expect(basename(paths.base)).toBe("tiny-base.gguf");
    expect(Object.keys(paths.adapters)).toEqual([...TEST_ADAPTER_LABELS]);
    expect(Object.keys(paths.adapters)).toEqual(["l0", "chat", "agent", "coding", "genui"]);
    expect(basename(paths.adapters.coding ?? "")).toBe("tiny-lora-coding.gguf");
    for (const file of listFiles(paths)) expect(existsSync(file), file).toBe(true);
    const lora = await readGgufFileHeader(paths.adapters.genui ?? "");
    expect(lora.metadata.get("general.type")).toEqual({ type: "string", value: "adapter" });
    expect(lora.metadata.get("adapter.type")).toEqual({ type: "string", value: "lora" });
    expect(lora.metadata.get("adapter.lora.alpha")).toEqual({ type: "f32", value: 4 });
    expect(lora.metadata.get("general.architecture")).toEqual({ type: "string", value: "llama" });
    if (hasFixture) {
      expect(paths.fixture?.base).toBe(fixturePath);
      expect(basename(paths.fixture?.adapters.l0 ?? "")).toBe("llama2-tiny-lora-l0.gguf");
    }
  });

  it("produces identical bytes in two fresh directories", async () => {
    const first = await ensureTestModels({ outDir: join(workDir, "a"), fixturePath });
    const second = await ensureTestModels({ outDir: join(workDir, "b"), fixturePath });
    const hashes = async (paths: TestModelPaths): Promise<string[]> =>
      Promise.all(listFiles(paths).map(async (file) => (await hashWholeFile(file)).sha256));
    expect(await hashes(first)).toEqual(await hashes(second));
  });

  it("leaves current files alone and repairs a damaged one", async () => {
    const outDir = join(workDir, "idempotent");
    const paths = await ensureTestModels({ outDir, fixturePath });
    const before = await stat(paths.base);
    const startedAt = performance.now();
    await ensureTestModels({ outDir, fixturePath });
    expect(performance.now() - startedAt).toBeLessThan(1000);
    expect((await stat(paths.base)).mtimeMs).toBe(before.mtimeMs);

    const adapter = paths.adapters.agent ?? "";
    const original = await readFile(adapter);
    const damaged = Uint8Array.from(original);
    damaged[damaged.length - 1] = (original.at(-1) ?? 0) ^ 0xff;
    await writeFile(adapter, damaged);
    await ensureTestModels({ outDir, fixturePath });
    expect(await readFile(adapter)).toEqual(original);
  });

  it("skips the fixture adapters when the fixture is absent", async () => {
    const paths = await ensureTestModels({
      outDir: join(workDir, "no-fixture"),
      fixturePath: join(workDir, "nope"),
    });
    expect(paths.fixture).toBeUndefined();
    expect(existsSync(join(workDir, "no-fixture", "llama2-tiny-lora-l0.gguf"))).toBe(false);
  });
});
