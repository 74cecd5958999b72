import { closeSync, openSync, readSync } from "node:fs";
import { readGgufFileHeader, decodeFloat16 } from "../../src/models/gguf/reader.ts";
import { encodeFloat16, writeGgufFile } from "../../src/models/gguf/writer.ts";
import {
  GGML_TYPE,
  measureTensorBytes,
  type GgufTensorInfo,
  type GgufValue,
} from "../../src/models/gguf/types.ts";

/**
 * Re-encodes a Q4_1 GGUF's Q4_1 tensors as Q8_0, every other tensor and all metadata copied as they are.
 *
 * Why a served base is re-encoded at all: llama.cpp's x86 CPU kernels for Q8_0 are much faster than its Q4_1
 * ones on the shapes a 135M model has, above all for the batched matmuls of a prefill (the route hop is
 * nothing else). Measured on this 2-core EPYC, one thread: a 200-token prefill 2.4× and decode 1.2× faster
 * (docs/benchmarks.md has the table). Q4_0 is faster still (it is repacked at load), but Q4_1 → Q4_0 is a second lossy
 * rounding: mean KL 0.44 nats from the Q4_1 distributions, where Q8_0 is at 0.006.
 *
 * Why it is (nearly) lossless: a Q4_1 block is 32 values d·q + m with q in 0..15; Q8_0 stores the same block
 * as d′·q′ with q′ in −127..127 and d′ = max|x|/127, so each weight moves by at most d′/2 ≈ 0.4 % of the
 * block's largest magnitude, a sixteenth of the Q4_1 step the weights were already rounded to.
 *
 * Why hand-written: llama.cpp's `llama-quantize` is not in node-llama-cpp's prebuilt binaries, and gguf-py
 * would put Python on the path to a first `npm start`. The arithmetic is two block formats, done in JS's
 * IEEE doubles, so the output's bytes (and the catalogue's pinned sha256) are the same on every machine.
 */

const Q4_1_BLOCK_BYTES = 20;
const Q8_0_BLOCK_BYTES = 34;
const BLOCK_ELEMENTS = 32;
/** llama_ftype: the file is "mostly" this type (norms stay F32, the embedding keeps its own type). */
const LLAMA_FTYPE_MOSTLY_Q8_0 = 7;
export const REQUANTIZED_FROM_KEY = "molmesh.requantized_from_sha256";

/** One Q4_1 row (a whole number of blocks) as Q8_0 blocks. */
export function requantizeQ4_1BlocksToQ8_0(q4: Uint8Array): Uint8Array {
  if (q4.length % Q4_1_BLOCK_BYTES !== 0) throw new Error(`${q4.length} bytes is not whole Q4_1 blocks`);
  const blocks = q4.length / Q4_1_BLOCK_BYTES;
  const out = new Uint8Array(blocks * Q8_0_BLOCK_BYTES);
  const inView = new DataView(q4.buffer, q4.byteOffset, q4.byteLength);
  const outView = new DataView(out.buffer);
  const values = new Float64Array(BLOCK_ELEMENTS);
  for (let b = 0; b < blocks; b++) {
    const at = b * Q4_1_BLOCK_BYTES;
    const d = decodeFloat16(inView.getUint16(at, true));
    const m = decodeFloat16(inView.getUint16(at + 2, true));
    let amax = 0;
    for (let j = 0; j < BLOCK_ELEMENTS / 2; j++) {
      const packed = q4[at + 4 + j] as number;
      // ggml's Q4_1 layout: the low nibbles are the block's first 16 values, the high nibbles the last 16.
      values[j] = d * (packed & 0x0f) + m;
      values[j + 16] = d * (packed >> 4) + m;
    }
    for (const v of values) amax = Math.max(amax, Math.abs(v));
    const to = b * Q8_0_BLOCK_BYTES;
    const scaleBits = encodeFloat16(amax / 127);
    outView.setUint16(to, scaleBits, true);
    // Divide by the scale as stored (f16), not the exact one: what llama.cpp multiplies back is the f16.
    const scale = decodeFloat16(scaleBits);
    const inverse = scale === 0 ? 0 : 1 / scale;
    for (let j = 0; j < BLOCK_ELEMENTS; j++) {
      const scaled = (values[j] as number) * inverse;
      // roundf (half away from zero), as ggml's reference quantizer rounds.
      const q = Math.sign(scaled) * Math.round(Math.abs(scaled));
      outView.setInt8(to + 2 + j, Math.max(-127, Math.min(127, q)));
    }
  }
  return out;
}

export interface RequantizeResult {
  requantizedTensors: number;
  copiedTensors: number;
  bytesWritten: number;
}

/**
 * Writes `destinationPath` (atomically, through the GGUF writer's temporary file) from `sourcePath`.
 * `sourceSha256` is recorded in the metadata, so the file says which weights it re-encodes.
 */
export async function requantizeGgufToQ8_0(
  sourcePath: string,
  destinationPath: string,
  sourceSha256: string,
): Promise<RequantizeResult> {
  const header = await readGgufFileHeader(sourcePath);
  if (!header.tensors.some((tensor) => tensor.type === GGML_TYPE.Q4_1)) {
    throw new Error(`${sourcePath} has no Q4_1 tensor to re-encode`);
  }
  const metadata = new Map<string, GgufValue>(header.metadata);
  metadata.set("general.file_type", { type: "u32", value: LLAMA_FTYPE_MOSTLY_Q8_0 });
  metadata.set(REQUANTIZED_FROM_KEY, { type: "string", value: sourceSha256 });
  const fd = openSync(sourcePath, "r");
  const readTensor = (tensor: GgufTensorInfo): Uint8Array => {
    const bytes = new Uint8Array(measureTensorBytes(tensor));
    const read = readSync(fd, bytes, 0, bytes.length, header.dataOffset + tensor.offset);
    if (read !== bytes.length) throw new Error(`short read of tensor ${tensor.name} in ${sourcePath}`);
    return bytes;
  };
  let requantizedTensors = 0;
  try {
    const tensors = header.tensors.map((tensor) => {
      if (tensor.type !== GGML_TYPE.Q4_1) return { ...tensor, data: () => readTensor(tensor) };
      requantizedTensors++;
      return {
        name: tensor.name,
        dims: tensor.dims,
        type: GGML_TYPE.Q8_0,
        data: () => requantizeQ4_1BlocksToQ8_0(readTensor(tensor)),
      };
    });
    const { bytesWritten } = await writeGgufFile(destinationPath, { metadata, tensors });
    return { requantizedTensors, copiedTensors: header.tensors.length - requantizedTensors, bytesWritten };
  } finally {
    closeSync(fd);
  }
}
