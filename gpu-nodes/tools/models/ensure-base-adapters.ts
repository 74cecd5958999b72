import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { readGgufFileHeader } from "../../src/models/gguf/reader.ts";
import { writeGgufFile } from "../../src/models/gguf/writer.ts";
import { buildLoraAdapter } from "../test-models/lora-adapter.ts";
import {
  hashWholeFile,
  isManifestSatisfied,
  readTestModelManifest,
  writeTestModelManifest,
} from "../test-models/ensure-test-models.ts";
import type { FileFingerprint } from "../test-models/ensure-test-models.ts";

/** Bump when the adapters' bytes change (rank, strength, seeding), so caches are rebuilt. */
export const BASE_ADAPTER_VERSION = 1;
/**
 * Small next to the base's own weights: each specialist answers measurably differently while a real base's
 * answers stay readable. The tiny model's LoRAs use 1, since its answers are noise anyway.
 */
export const BASE_ADAPTER_STRENGTH = 0.05;

export interface BaseAdapterOptions {
  basePath: string;
  /** The base file's sha256: it keys the folder, so two bases never share adapters. */
  baseSha256: string;
  /** The models cache; adapters go under `adapters/<sha256 prefix>-v<version>/`. */
  modelsDir: string;
  labels: readonly string[];
}

/**
 * Random low-rank LoRAs shaped for an arbitrary llama-family base GGUF (shapes read from its header), one per
 * label and seeded by it, so each specialist is a distinct adapter until trained ones replace them.
 */
export async function ensureBaseAdapters(options: BaseAdapterOptions): Promise<Record<string, string>> {
  const outDir = join(
    options.modelsDir,
    "adapters",
    `${options.baseSha256.slice(0, 16)}-v${BASE_ADAPTER_VERSION}`,
  );
  const paths = Object.fromEntries(
    options.labels.map((label) => [label, join(outDir, `lora-${label}.gguf`)]),
  );
  const manifest = await readTestModelManifest(outDir);
  if (
    manifest &&
    manifest.generatorVersion === BASE_ADAPTER_VERSION &&
    options.labels.every((label) => manifest.files[`lora-${label}.gguf`] !== undefined) &&
    (await isManifestSatisfied(outDir, manifest))
  ) {
    return paths;
  }
  await mkdir(outDir, { recursive: true });
  const header = await readGgufFileHeader(options.basePath);
  const files: Record<string, FileFingerprint> = {};
  for (const [label, path] of Object.entries(paths)) {
    await writeGgufFile(path, buildLoraAdapter({ base: header, label, strength: BASE_ADAPTER_STRENGTH }));
    files[`lora-${label}.gguf`] = await hashWholeFile(path);
  }
  await writeTestModelManifest(outDir, {
    generatorVersion: BASE_ADAPTER_VERSION,
    // The manifest's "fixture" is the file the adapters were derived from: here, the base.
    fixture: { bytes: (await stat(options.basePath)).size, sha256: options.baseSha256 },
    files,
  });
  return paths;
}
