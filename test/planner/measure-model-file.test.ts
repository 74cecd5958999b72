import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GGML_TYPE, type GgufValue } from "../../gpu-nodes/src/models/gguf/types.ts";
import { planGgufLayout } from "../../gpu-nodes/src/models/gguf/writer.ts";
import { measureModelFile } from "../../gpu-nodes/tools/planner/measure-model-file.ts";
import { writeSafetensors, writeSmallBaseGguf, writeSmallLoraGguf } from "./model-files.ts";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "molmesh-plan-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("measuring a GGUF from its header", () => {
  it("counts parameters and stored bytes per ggml type, and reads the attention shape", async () => {
    const path = join(dir, "base.gguf");
    await writeSmallBaseGguf(path);

    expect(await measureModelFile(path)).toEqual({
      path,
      format: "gguf",
      parameters: 5280,
      bytes: 8704,
      kvCache: { layers: 1, kvHeads: 2, keyLength: 8, valueLength: 8, context: 256 },
    });
  });

  it("gives an adapter no attention shape", async () => {
    const path = join(dir, "lora.gguf");
    await writeSmallLoraGguf(path);

    expect(await measureModelFile(path)).toEqual({ path, format: "gguf", parameters: 384, bytes: 1536 });
  });

  it("never needs the tensor data: a header-only file of a 131M-parameter model measures the same", async () => {
    const metadata = new Map<string, GgufValue>([
      ["general.architecture", { type: "string", value: "llama" }],
    ]);
    const tensor = { name: "token_embd.weight", dims: [4096, 32000], type: GGML_TYPE.F16 };
    const { headerBytes } = planGgufLayout({
      metadata,
      tensors: [{ ...tensor, data: () => new Uint8Array() }],
    });
    const path = join(dir, "header-only.gguf");
    await writeFile(path, headerBytes);

    const measured = await measureModelFile(path);
    expect(measured.parameters).toBe(131_072_000);
    expect(measured.bytes).toBe(262_144_000);
  });
});

describe("measuring a safetensors file from its header", () => {
  const header = {
    __metadata__: { format: "pt" },
    "lora_A.weight": { dtype: "BF16", shape: [4, 8], data_offsets: [0, 64] },
    bias: { dtype: "F32", shape: [8], data_offsets: [64, 96] },
    scales: { dtype: "F8_E4M3", shape: [2, 3, 5], data_offsets: [96, 126] },
  };

  it("multiplies each shape out and sizes it by dtype", async () => {
    const path = join(dir, "adapter.safetensors");
    await writeSafetensors(path, header, 126);

    // 32 + 8 + 30 parameters; 32·2 + 8·4 + 30·1 bytes.
    expect(await measureModelFile(path)).toEqual({ path, format: "safetensors", parameters: 70, bytes: 126 });
  });

  it("rejects a header whose byte range disagrees with the shape", async () => {
    const path = join(dir, "lying.safetensors");
    await writeSafetensors(path, { w: { dtype: "F16", shape: [4, 4], data_offsets: [0, 16] } }, 16);

    await expect(measureModelFile(path)).rejects.toThrow(
      "safetensors tensor w: data_offsets span 16 bytes, F16 [4,4] needs 32",
    );
  });

  it("rejects an unknown dtype and a length prefix past the end of the file", async () => {
    const unknown = join(dir, "unknown.safetensors");
    await writeSafetensors(unknown, { w: { dtype: "Q4", shape: [2], data_offsets: [0, 1] } }, 1);
    await expect(measureModelFile(unknown)).rejects.toThrow("unknown safetensors dtype Q4");

    const truncated = join(dir, "truncated.safetensors");
    const bytes = new Uint8Array(16);
    new DataView(bytes.buffer).setBigUint64(0, 1000n, true);
    bytes[8] = "{".charCodeAt(0);
    await writeFile(truncated, bytes);
    await expect(measureModelFile(truncated)).rejects.toThrow("header length 1000 exceeds the file");
  });

  it("refuses a file that is neither format", async () => {
    const path = join(dir, "notes.txt");
    await writeFile(path, "just some text, not weights");
    await expect(measureModelFile(path)).rejects.toThrow("is neither a GGUF nor a safetensors file");
  });
});
