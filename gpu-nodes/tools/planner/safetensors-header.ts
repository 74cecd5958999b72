import { open } from "node:fs/promises";
import { z } from "zod";

/** Bytes per element of each safetensors dtype (the format's own list; sub-byte types are not in it). */
const BYTES_BY_DTYPE: ReadonlyMap<string, number> = new Map([
  ["F64", 8],
  ["I64", 8],
  ["U64", 8],
  ["F32", 4],
  ["I32", 4],
  ["U32", 4],
  ["F16", 2],
  ["BF16", 2],
  ["I16", 2],
  ["U16", 2],
  ["F8_E4M3", 1],
  ["F8_E5M2", 1],
  ["F8_E8M0", 1],
  ["I8", 1],
  ["U8", 1],
  ["BOOL", 1],
]);

function getSafetensorsDtypeBytes(dtype: string): number {
  const bytes = BYTES_BY_DTYPE.get(dtype);
  if (bytes === undefined) throw new Error(`unknown safetensors dtype ${dtype}`);
  return bytes;
}

export interface SafetensorsTensorInfo {
  name: string;
  dtype: string;
  shape: readonly number[];
  /** [begin, end) relative to the byte after the header. */
  dataOffsets: readonly [number, number];
  parameters: number;
  bytes: number;
}

export interface SafetensorsHeader {
  metadata: Readonly<Record<string, string>>;
  tensors: readonly SafetensorsTensorInfo[];
}

const METADATA_KEY = "__metadata__";

const tensorEntrySchema = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});
const metadataSchema = z.record(z.string(), z.string());

/**
 * The JSON that follows the 8-byte length prefix. Each tensor's byte range must match its shape and dtype:
 * a header that lies about sizes would make every count after it wrong.
 */
function parseSafetensorsHeader(json: string): SafetensorsHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error: unknown) {
    throw new Error(
      `safetensors header is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Error("safetensors header is not a JSON object");
  }
  let metadata: Record<string, string> = {};
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (name === METADATA_KEY) {
      metadata = metadataSchema.parse(value);
      continue;
    }
    const entry = tensorEntrySchema.safeParse(value);
    if (!entry.success) throw new Error(`safetensors tensor ${name}: ${entry.error.issues[0]?.message}`);
    const { dtype, shape, data_offsets: dataOffsets } = entry.data;
    const parameters = shape.reduce((product, dim) => product * dim, 1);
    const bytes = parameters * getSafetensorsDtypeBytes(dtype);
    if (dataOffsets[1] - dataOffsets[0] !== bytes) {
      throw new Error(
        `safetensors tensor ${name}: data_offsets span ${dataOffsets[1] - dataOffsets[0]} bytes, ` +
          `${dtype} ${JSON.stringify(shape)} needs ${bytes}`,
      );
    }
    tensors.push({ name, dtype, shape, dataOffsets, parameters, bytes });
  }
  return { metadata, tensors };
}

const LENGTH_PREFIX_BYTES = 8;
/** The reference implementation refuses headers over 100 MB; a bigger prefix means a corrupt file. */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/** Reads the length prefix and the JSON header only; tensor data is never touched. */
export async function readSafetensorsFileHeader(path: string): Promise<SafetensorsHeader> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const prefix = new Uint8Array(LENGTH_PREFIX_BYTES);
    await readExactly(handle, prefix, 0, path);
    const length = new DataView(prefix.buffer).getBigUint64(0, true);
    if (length > BigInt(Math.min(MAX_SAFETENSORS_HEADER_BYTES, size - LENGTH_PREFIX_BYTES))) {
      throw new Error(`${path}: safetensors header length ${length} exceeds the file or the 100 MB limit`);
    }
    const json = new Uint8Array(Number(length));
    await readExactly(handle, json, LENGTH_PREFIX_BYTES, path);
    return parseSafetensorsHeader(new TextDecoder().decode(json));
  } finally {
    await handle.close();
  }
}

async function readExactly(
  handle: Awaited<ReturnType<typeof open>>,
  buffer: Uint8Array,
  position: number,
  path: string,
): Promise<void> {
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
  if (bytesRead !== buffer.length) throw new Error(`${path}: file is truncated at byte ${position}`);
}
