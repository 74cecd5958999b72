import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeFloat16, readGgufFileHeader } from "../../gpu-nodes/src/models/gguf/reader.ts";
import { GGML_TYPE, getGgufNumber, getGgufString } from "../../gpu-nodes/src/models/gguf/types.ts";
import { encodeF32Tensor, encodeFloat16, writeGgufFile } from "../../gpu-nodes/src/models/gguf/writer.ts";
import { findTrainedRouter } from "../../gpu-nodes/tools/models/find-trained-router.ts";
import {
  DEFAULT_BASE_MODEL,
  SMOLLM2_Q4_1_MODEL,
  TINY_MODEL,
  findCatalogEntry,
  weightsSha256s,
  type CatalogEntry,
} from "../../gpu-nodes/tools/models/model-catalog.ts";
import { ModelPullError, pullModel, type PipRunner } from "../../gpu-nodes/tools/models/pull-model.ts";
import {
  REQUANTIZED_FROM_KEY,
  requantizeGgufToQ8_0,
  requantizeQ4_1BlocksToQ8_0,
} from "../../gpu-nodes/tools/models/requantize-gguf.ts";
import { compareNextTokenDistributions } from "../harness/compare-next-token-distributions.ts";
import { findSmollm2SourceModel } from "../harness/find-smollm2-model.ts";
import { REAL_MODEL_PATH, skipWithoutRealModel } from "../harness/real-model.ts";

const f16Arb = fc
  .float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true })
  .map((value) => encodeFloat16(value));

/** One Q4_1 block: f16 scale, f16 minimum, 16 bytes of nibbles. */
const q4BlockArb = fc
  .tuple(f16Arb, f16Arb, fc.uint8Array({ minLength: 16, maxLength: 16 }))
  .map(([d, m, nibbles]) => {
    const block = new Uint8Array(20);
    const view = new DataView(block.buffer);
    view.setUint16(0, d, true);
    view.setUint16(2, m, true);
    block.set(nibbles, 4);
    return block;
  });

function decodeQ4_1(block: Uint8Array): number[] {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  const d = decodeFloat16(view.getUint16(0, true));
  const m = decodeFloat16(view.getUint16(2, true));
  const nibbles = [...block.subarray(4, 20)];
  return [...nibbles.map((b) => d * (b & 0x0f) + m), ...nibbles.map((b) => d * (b >> 4) + m)];
}

function decodeQ8_0(block: Uint8Array): { scale: number; values: number[] } {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  const scale = decodeFloat16(view.getUint16(0, true));
  return { scale, values: Array.from({ length: 32 }, (_, j) => scale * view.getInt8(2 + j)) };
}

describe("Q4_1 → Q8_0 block re-encoding", () => {
  it("moves every weight by at most half a Q8_0 step, the step being 1/127 of the block's largest weight", () => {
    fc.assert(
      fc.property(q4BlockArb, (block) => {
        const before = decodeQ4_1(block);
        const after = decodeQ8_0(requantizeQ4_1BlocksToQ8_0(block));
        const amax = Math.max(...before.map(Math.abs));
        // Steps below f16's normal range lose relative precision; no trained weight block is that flat.
        fc.pre(amax / 127 >= 2 ** -14);
        // The stored step is amax/127 rounded to f16 (relative error ≤ 2⁻¹¹).
        expect(Math.abs(after.scale - amax / 127)).toBeLessThanOrEqual((amax / 127) * 2 ** -10);
        before.forEach((value, j) => {
          expect(Math.abs((after.values[j] as number) - value)).toBeLessThanOrEqual(
            after.scale * 0.501 + 1e-12,
          );
        });
      }),
    );
  });

  it("keeps ggml's nibble order (low nibbles first) and writes an all-zero block as zeros", () => {
    const block = new Uint8Array(20);
    new DataView(block.buffer).setUint16(0, encodeFloat16(1), true);
    block[4] = 0x0f; // value 0 = 15, value 16 = 0
    const { values } = decodeQ8_0(requantizeQ4_1BlocksToQ8_0(block));
    expect(values[0]).toBeCloseTo(15, 1);
    expect(values[16]).toBe(0);
    expect([...requantizeQ4_1BlocksToQ8_0(new Uint8Array(40))].every((b) => b === 0)).toBe(true);
    expect(() => requantizeQ4_1BlocksToQ8_0(new Uint8Array(21))).toThrow("not whole Q4_1 blocks");
  });
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "molmesh-requant-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A two-tensor GGUF: a 64×4 Q4_1 weight (deterministic blocks) and an F32 norm. */
async function writeQ4_1Gguf(path: string): Promise<{ weight: Uint8Array; norm: Float32Array }> {
  const weight = new Uint8Array(8 * 20);
  const view = new DataView(weight.buffer);
  for (let b = 0; b < 8; b++) {
    view.setUint16(b * 20, encodeFloat16(0.01 * (b + 1)), true);
    view.setUint16(b * 20 + 2, encodeFloat16(-0.05 * b), true);
    for (let j = 0; j < 16; j++) weight[b * 20 + 4 + j] = (b * 37 + j * 11) & 0xff;
  }
  const norm = Float32Array.from({ length: 64 }, (_, i) => 1 + i / 64);
  await writeGgufFile(path, {
    metadata: new Map([
      ["general.architecture", { type: "string", value: "llama" }],
      ["general.file_type", { type: "u32", value: 3 }],
    ]),
    tensors: [
      { name: "blk.0.attn_q.weight", dims: [64, 4], type: GGML_TYPE.Q4_1, data: () => weight },
      { name: "blk.0.attn_norm.weight", dims: [64], type: GGML_TYPE.F32, data: () => encodeF32Tensor(norm) },
    ],
  });
  return { weight, norm };
}

const sha256Of = async (path: string) =>
  createHash("sha256")
    .update(await readFile(path))
    .digest("hex");

describe("requantizeGgufToQ8_0", () => {
  it("re-encodes the Q4_1 tensors, copies the rest byte for byte, and marks the file with its source", async () => {
    const source = join(dir, "m.Q4_1.gguf");
    const { weight, norm } = await writeQ4_1Gguf(source);
    const result = await requantizeGgufToQ8_0(source, join(dir, "m.Q8_0.gguf"), "ab".repeat(32));
    expect(result).toMatchObject({ requantizedTensors: 1, copiedTensors: 1 });
    const header = await readGgufFileHeader(join(dir, "m.Q8_0.gguf"));
    expect(header.tensors.map((t) => [t.name, t.type])).toEqual([
      ["blk.0.attn_q.weight", GGML_TYPE.Q8_0],
      ["blk.0.attn_norm.weight", GGML_TYPE.F32],
    ]);
    expect(getGgufNumber(header.metadata, "general.file_type")).toBe(7);
    expect(getGgufString(header.metadata, REQUANTIZED_FROM_KEY)).toBe("ab".repeat(32));
    const bytes = await readFile(join(dir, "m.Q8_0.gguf"));
    const at = (name: string) =>
      header.dataOffset + (header.tensors.find((t) => t.name === name)?.offset ?? -1);
    const q8 = bytes.subarray(at("blk.0.attn_q.weight"), at("blk.0.attn_q.weight") + 8 * 34);
    expect(Buffer.from(q8)).toEqual(Buffer.from(requantizeQ4_1BlocksToQ8_0(weight)));
    const normBytes = bytes.subarray(at("blk.0.attn_norm.weight"), at("blk.0.attn_norm.weight") + 256);
    expect(Buffer.from(normBytes)).toEqual(Buffer.from(encodeF32Tensor(norm)));
    // Deterministic: the catalogue pins the output's sha256.
    await requantizeGgufToQ8_0(source, join(dir, "again.gguf"), "ab".repeat(32));
    expect(await sha256Of(join(dir, "again.gguf"))).toBe(await sha256Of(join(dir, "m.Q8_0.gguf")));
  });

  it("refuses a file with nothing to re-encode", async () => {
    const path = join(dir, "f32.gguf");
    await writeGgufFile(path, {
      metadata: new Map([["general.architecture", { type: "string", value: "llama" }]]),
      tensors: [{ name: "w", dims: [32], type: GGML_TYPE.F32, data: () => new Uint8Array(128) }],
    });
    await expect(requantizeGgufToQ8_0(path, join(dir, "out.gguf"), "")).rejects.toThrow("no Q4_1 tensor");
    expect(existsSync(join(dir, "out.gguf"))).toBe(false);
  });
});

describe("pulling a re-encoded catalogue entry", () => {
  const noPip: PipRunner = () => Promise.reject(new Error("pip is not here"));
  const noFetch = () => Promise.reject(new Error("offline"));
  async function catalogue(pinned?: string): Promise<{ q4: CatalogEntry; q8: CatalogEntry }> {
    const q4Path = join(dir, "m.Q4_1.gguf");
    await writeQ4_1Gguf(q4Path);
    const q4Sha = await sha256Of(q4Path);
    await requantizeGgufToQ8_0(q4Path, join(dir, "expected.gguf"), q4Sha);
    const base = { license: "MIT", chatTemplate: "none", contextTokens: 512, description: "t" } as const;
    const q4: CatalogEntry = {
      ...base,
      kind: "download",
      name: "m-q4_1",
      fileName: "m.Q4_1.gguf",
      sha256: q4Sha,
      bytes: (await readFile(q4Path)).length,
      sources: {
        hub: { repo: "x/y", file: "m.gguf", revision: "main" },
        pypi: { package: "m", version: "1", member: "m" },
      },
    };
    const q8: CatalogEntry = {
      ...base,
      kind: "requantized",
      name: "m",
      from: "m-q4_1",
      quantization: "Q8_0",
      fileName: "m.Q8_0.gguf",
      sha256: pinned ?? (await sha256Of(join(dir, "expected.gguf"))),
      bytes: (await readFile(join(dir, "expected.gguf"))).length,
    };
    await rm(join(dir, "expected.gguf"));
    return { q4, q8 };
  }
  const pull = (entry: CatalogEntry, all: CatalogEntry[], reports: string[] = []) =>
    pullModel(
      entry,
      { modelsDir: dir, catalog: all },
      { fetch: noFetch, runPip: noPip, report: (line) => reports.push(line) },
    );

  it("re-encodes the source once, then serves it from the cache; a corrupt copy is deleted and remade", async () => {
    const { q4, q8 } = await catalogue();
    const reports: string[] = [];
    expect((await pull(q8, [q4, q8], reports)).source).toBe("requantized");
    expect(reports.at(-1)).toMatch(/m: m\.Q8_0\.gguf re-encoded from .*m\.Q4_1\.gguf, sha256 checked/);
    expect((await pull(q8, [q4, q8])).source).toBe("cache");
    await writeFile(join(dir, "m.Q8_0.gguf"), "garbage");
    const again: string[] = [];
    const pulled = await pull(q8, [q4, q8], again);
    expect(pulled.source).toBe("requantized");
    expect(again[0]).toMatch(/^deleted .*m\.Q8_0\.gguf: 7 bytes, expected/);
    expect(await sha256Of(pulled.path)).toBe(q8.sha256);
  });

  it("fails, leaving nothing behind, when the re-encoder no longer writes the pinned bytes", async () => {
    const { q4, q8 } = await catalogue("0".repeat(64));
    await expect(pull(q8, [q4, q8])).rejects.toThrow(/the requantizer changed/);
    expect((await readdir(dir)).sort()).toEqual(["m.Q4_1.gguf"]);
  });

  it("fails with the source's ModelPullError when the source cannot be had, so npm start can fall back", async () => {
    const { q4, q8 } = await catalogue();
    await rm(join(dir, "m.Q4_1.gguf"));
    const error: unknown = await pull(q8, [q4, q8]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelPullError);
    expect((error as ModelPullError).attempts.map((a) => a.source)).toEqual(["cache", "hub", "pypi"]);
  });
});

describe("the catalogue's served SmolLM2", () => {
  it("is the Q8_0 re-encoding of the packaged Q4_1, and the committed router adapter serves it", () => {
    const served = findCatalogEntry(DEFAULT_BASE_MODEL);
    const source = findCatalogEntry(SMOLLM2_Q4_1_MODEL);
    if (served?.kind !== "requantized" || source?.kind !== "download") throw new Error("catalogue changed");
    expect(served.from).toBe(source.name);
    expect(weightsSha256s(served)).toEqual([served.sha256, source.sha256]);
    expect(weightsSha256s(source)).toEqual([source.sha256, served.sha256]);
    // Trained on the served Q8_0: found through its own hash, and for the packaged Q4_1 through the weights
    // both files hold; another model's weights get none.
    expect(findTrainedRouter(weightsSha256s(served))?.manifest.baseSha256).toBe(served.sha256);
    expect(findTrainedRouter(weightsSha256s(source))?.manifest.baseSha256).toBe(served.sha256);
    expect(findTrainedRouter([source.sha256])).toBeUndefined();
    const tiny = findCatalogEntry(TINY_MODEL);
    if (!tiny) throw new Error("catalogue changed");
    expect(findTrainedRouter(weightsSha256s(tiny))).toBeUndefined();
  });
});

/**
 * The served SmolLM2 against the packaged file it is made from, through llama.cpp itself: a layout or
 * rounding bug in the re-encoder changes the next-token distributions by far more than this bound.
 */
const q4_1Path = findSmollm2SourceModel();
const haveBoth = !skipWithoutRealModel("requantize-gguf") && q4_1Path !== undefined;
if (!haveBoth && REAL_MODEL_PATH && process.env["CI"] === "true") {
  throw new Error(`requantize-gguf: the packaged Q4_1 is missing beside ${REAL_MODEL_PATH} (CI=true)`);
}

describe.skipIf(!haveBoth)("the served SmolLM2 Q8_0 against its Q4_1 source", () => {
  it("gives the same next-token distributions to within a small KL, with the same top token almost everywhere", async () => {
    const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
    const text =
      "<|im_start|>user\nWhat is a hash table, and when is a sorted array the better choice?<|im_end|>\n" +
      "<|im_start|>assistant\nA hash table maps keys to values through a hash function, so lookups take " +
      "constant time on average. A sorted array keeps order, so range queries and ordered scans are cheap.";
    try {
      const { meanKlNats, top1Agreement } = await compareNextTokenDistributions(
        llama,
        q4_1Path as string,
        REAL_MODEL_PATH as string,
        text,
      );
      // Measured: mean KL 0.006 nats, top-1 96 %. A Q4_1 → Q4_0 re-rounding gives 0.44 and 72 %.
      expect(meanKlNats).toBeLessThan(0.05);
      expect(top1Agreement).toBeGreaterThan(0.9);
    } finally {
      await llama.dispose();
    }
  });
});
