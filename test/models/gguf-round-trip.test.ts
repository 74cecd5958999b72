import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readGgufFileInfo } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import {
  decodeFloat16,
  decodeTensorData,
  parseGgufHeader,
  readGgufHeader,
  readGgufTensorData,
} from "../../gpu-nodes/src/models/gguf/reader.ts";
import {
  encodeF16Tensor,
  encodeF32Tensor,
  encodeFloat16,
  writeGgufFile,
  type GgufWriteInput,
} from "../../gpu-nodes/src/models/gguf/writer.ts";
import { GGML_TYPE, type GgufValue } from "../../gpu-nodes/src/models/gguf/types.ts";
import { createMemoryByteSource, writeGgufToMemory } from "./memory-gguf.ts";

const ALL_VALUE_KINDS = new Map<string, GgufValue>([
  ["t.u8", { type: "u8", value: 255 }],
  ["t.i8", { type: "i8", value: -128 }],
  ["t.u16", { type: "u16", value: 65535 }],
  ["t.i16", { type: "i16", value: -32768 }],
  ["t.u32", { type: "u32", value: 4294967295 }],
  ["t.i32", { type: "i32", value: -2147483648 }],
  ["t.f32", { type: "f32", value: 0.5 }],
  ["t.bool", { type: "bool", value: true }],
  ["t.string", { type: "string", value: "héllo ▁ 日本 🙂" }],
  ["t.u64", { type: "u64", value: 18446744073709551615n }],
  ["t.i64", { type: "i64", value: -9223372036854775808n }],
  ["t.f64", { type: "f64", value: Math.PI }],
  ["t.strings", { type: "array", itemType: "string", values: ["a", "", "▁b"] }],
  ["t.i32s", { type: "array", itemType: "i32", values: [1, -2, 3] }],
  ["t.empty", { type: "array", itemType: "f32", values: [] }],
]);

const matrix = Float32Array.from({ length: 3 * 5 }, (_, i) => i - 7.25);
const vector = Float32Array.from([1.5, -2, 65504, 0.000061035156]);

function buildInput(alignment?: number): GgufWriteInput {
  const metadata = new Map(ALL_VALUE_KINDS);
  if (alignment !== undefined) metadata.set("general.alignment", { type: "u32", value: alignment });
  return {
    metadata,
    tensors: [
      { name: "m", dims: [3, 5], type: GGML_TYPE.F32, data: () => encodeF32Tensor(matrix) },
      { name: "v16", dims: [4], type: GGML_TYPE.F16, data: () => encodeF16Tensor(vector) },
      // Chunked data: the writer must stream an iterable, not need one buffer.
      {
        name: "chunked",
        dims: [6],
        type: GGML_TYPE.F32,
        data: () => [encodeF32Tensor(Float32Array.of(1, 2)), encodeF32Tensor(Float32Array.of(3, 4, 5, 6))],
      },
    ],
  };
}

describe("GGUF writer and reader", () => {
  it("round-trips every metadata kind, tensor infos and tensor data", async () => {
    const written = await writeGgufToMemory(buildInput());
    expect(new TextDecoder().decode(written.bytes.subarray(0, 4))).toBe("GGUF");
    expect(new DataView(written.bytes.buffer).getUint32(4, true)).toBe(3);
    expect(written.bytes.length).toBe(written.bytesWritten);
    expect(written.chunkCount).toBeGreaterThan(3);

    const source = createMemoryByteSource(written.bytes);
    const header = await readGgufHeader(source);
    expect(header.version).toBe(3);
    expect(header.alignment).toBe(32);
    expect(header.dataOffset % 32).toBe(0);
    expect(header.dataOffset).toBe(written.header.dataOffset);
    expect([...header.metadata.keys()]).toEqual([...ALL_VALUE_KINDS.keys()]);
    expect(header.metadata).toEqual(ALL_VALUE_KINDS);
    expect(header.tensors).toEqual([
      { name: "m", dims: [3, 5], type: GGML_TYPE.F32, offset: 0 },
      { name: "v16", dims: [4], type: GGML_TYPE.F16, offset: 64 },
      { name: "chunked", dims: [6], type: GGML_TYPE.F32, offset: 96 },
    ]);
    expect(written.bytes.length).toBe(header.dataOffset + 128);

    const read = async (name: string, type: number): Promise<number[]> => [
      ...decodeTensorData(await readGgufTensorData(source, header, name), type),
    ];
    expect(await read("m", GGML_TYPE.F32)).toEqual([...matrix]);
    expect(await read("v16", GGML_TYPE.F16)).toEqual([1.5, -2, 65504, 0.00006103515625]);
    expect(await read("chunked", GGML_TYPE.F32)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("honours general.alignment for the data section and every tensor", async () => {
    const written = await writeGgufToMemory(buildInput(128));
    const header = await readGgufHeader(createMemoryByteSource(written.bytes));
    expect(header.alignment).toBe(128);
    expect(header.dataOffset % 128).toBe(0);
    expect(header.tensors.map((t) => t.offset)).toEqual([0, 128, 256]);
  });

  it("grows its read window instead of reading the whole file", async () => {
    const tokens = Array.from({ length: 5000 }, (_, i) => `token-${i}`);
    const big: GgufWriteInput = {
      metadata: new Map<string, GgufValue>([
        ["tokens", { type: "array", itemType: "string", values: tokens }],
      ]),
      tensors: [
        { name: "w", dims: [4096, 64], type: GGML_TYPE.F32, data: () => new Uint8Array(4096 * 64 * 4) },
      ],
    };
    const written = await writeGgufToMemory(big);
    const source = createMemoryByteSource(written.bytes);
    const header = await readGgufHeader(source, { initialWindowBytes: 1024 });
    expect(header.metadata.get("tokens")).toEqual({ type: "array", itemType: "string", values: tokens });
    expect(source.highestByteRead).toBeGreaterThanOrEqual(header.dataOffset);
    expect(source.highestByteRead).toBeLessThan(written.bytes.length / 2);
  });

  it("rejects bad magic, truncation and data of the wrong size", async () => {
    const written = await writeGgufToMemory(buildInput());
    const wrongMagic = written.bytes.slice();
    wrongMagic[0] = 0x58;
    expect(() => parseGgufHeader(wrongMagic, wrongMagic.length)).toThrow(/not a GGUF file/);
    const truncated = written.bytes.slice(0, 100);
    expect(() => parseGgufHeader(truncated, truncated.length)).toThrow(/truncated/);
    const short: GgufWriteInput = {
      metadata: new Map(),
      tensors: [{ name: "x", dims: [4], type: GGML_TYPE.F32, data: () => new Uint8Array(12) }],
    };
    await expect(writeGgufToMemory(short)).rejects.toThrow(/12 bytes, shape needs 16/);
  });

  it("converts float16 with round-to-nearest-even, subnormals and infinities", () => {
    expect(encodeFloat16(1)).toBe(0x3c00);
    expect(encodeFloat16(-2)).toBe(0xc000);
    expect(encodeFloat16(65504)).toBe(0x7bff);
    expect(encodeFloat16(65520)).toBe(0x7c00);
    expect(encodeFloat16(2 ** -24)).toBe(0x0001);
    expect(encodeFloat16(1 + 2 ** -11)).toBe(0x3c00);
    expect(encodeFloat16(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(decodeFloat16(0x3555)).toBeCloseTo(1 / 3, 3);
    expect(Number.isNaN(decodeFloat16(encodeFloat16(NaN)))).toBe(true);
  });

  it("writes files that node-llama-cpp's own GGUF parser agrees with", async () => {
    const dir = await mkdtemp(join(tmpdir(), "molmesh-gguf-"));
    try {
      const path = join(dir, "round-trip.gguf");
      await writeGgufFile(path, buildInput());
      const info = await readGgufFileInfo(path, { readTensorInfo: true, logWarnings: false });
      expect(info.version).toBe(3);
      expect(info.tensorCount).toBe(3);
      expect(info.fullTensorInfo?.map((t) => [t.name, t.dimensions.map(Number), t.ggmlType])).toEqual([
        ["m", [3, 5], 0],
        ["v16", [4], 1],
        ["chunked", [6], 0],
      ]);
      expect(info.metadata).toMatchObject({ t: { string: "héllo ▁ 日本 🙂", i32s: [1, -2, 3], u16: 65535 } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
