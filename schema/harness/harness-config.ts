import { z } from "zod";
import { hashHarness } from "./content-hash.ts";
import { DEFAULT_HARNESS, buildDefaultHarness, type ServedModelProfile } from "./default-harness.ts";
import { harnessDocumentSchema, type HarnessDocument } from "./harness-document.ts";

/**
 * The harness a turn runs under: the per-model defaults (the served model's chat format and context), with the
 * operator's harness document (`MOL_HARNESS`, JSON) laid over them. The document may be partial: objects merge
 * key by key, anything else (arrays, strings, numbers) replaces the default. The result is validated whole.
 */
export class HarnessConfigError extends Error {
  override readonly name = "HarnessConfigError";
}

export type HarnessOverlay = Record<string, unknown>;

/** Parses `MOL_HARNESS`: undefined or blank is no overlay; anything but a JSON object is an error. */
export function parseHarnessOverlay(text: string | undefined): HarnessOverlay | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HarnessConfigError(`MOL_HARNESS is not JSON: ${String(error)}`);
  }
  const parsed = z.record(z.string(), z.unknown()).safeParse(value);
  if (!parsed.success) throw new HarnessConfigError("MOL_HARNESS must be a JSON object (a harness document)");
  return parsed.data;
}

export function buildHarness(
  model: ServedModelProfile,
  overlay: HarnessOverlay | undefined,
): HarnessDocument {
  const merged = overlay ? mergeDeep(buildDefaultHarness(model), overlay) : buildDefaultHarness(model);
  const result = harnessDocumentSchema.safeParse(merged);
  if (!result.success) {
    throw new HarnessConfigError(
      `the harness for a ${model.family} model with ${model.contextTokens} context tokens is invalid:\n` +
        z.prettifyError(result.error),
    );
  }
  return result.data;
}

export interface ResolvedHarness {
  harness: HarnessDocument;
  harnessHash: string;
}

/**
 * Harnesses by served model, built once each. A profile the defaults cannot serve (a context too small, an
 * overlay that does not fit it) falls back to the compiled default and reports why once.
 */
export function createHarnessResolver(options: {
  overlay: HarnessOverlay | undefined;
  onInvalid: (error: Error) => void;
}): (model: ServedModelProfile) => Promise<ResolvedHarness> {
  const cache = new Map<string, Promise<ResolvedHarness>>();
  return (model) => {
    const key = `${model.family}/${model.contextTokens}`;
    let resolved = cache.get(key);
    if (!resolved) {
      let harness: HarnessDocument;
      try {
        harness = buildHarness(model, options.overlay);
      } catch (error) {
        options.onInvalid(error instanceof Error ? error : new Error(String(error)));
        harness = DEFAULT_HARNESS;
      }
      resolved = hashHarness(harness).then((harnessHash) => ({ harness, harnessHash }));
      cache.set(key, resolved);
    }
    return resolved;
  };
}

function mergeDeep(base: unknown, overlay: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(overlay)) return overlay;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    out[key] = Object.hasOwn(base, key) ? mergeDeep(base[key], value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
