import { z } from "zod";
import { getSafetensorsDtypeBytes } from "./safetensors-dtype.ts";

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
export function parseSafetensorsHeader(json: string): SafetensorsHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error: unknown) {
    throw new Error(`safetensors header is not JSON: ${error instanceof Error ? error.message : error}`, {
      cause: error,
    });
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
