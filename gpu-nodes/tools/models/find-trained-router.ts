import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** Where `npm run train:router` commits the router adapter and its manifest. */
export const TRAINED_ROUTER_DIR = fileURLToPath(new URL("../../training/router/adapters/", import.meta.url));

export const trainedRouterManifestSchema = z.object({
  adapter: z.string(),
  baseModel: z.string(),
  baseSha256: z.string().regex(/^[0-9a-f]{64}$/),
  adapterSha256: z.string().regex(/^[0-9a-f]{64}$/),
  corpusSha256: z.string(),
  hyperparameters: z.record(z.string(), z.unknown()),
  devAccuracy: z.number().min(0).max(1).nullable(),
  /** Test accuracy from the committed eval report; absent from manifests written before the eval. */
  testAccuracy: z.number().min(0).max(1).nullable().optional(),
  /** The chat format and context of the views it was trained on: a mesh rendering another format routes worse. */
  views: z.object({ family: z.string(), contextTokens: z.int().positive() }).optional(),
  minConfidence: z.number().min(0).max(1).nullable(),
  trainingSeconds: z.number().nonnegative(),
  trainedAt: z.string(),
});
export type TrainedRouterManifest = z.infer<typeof trainedRouterManifestSchema>;

/**
 * The trained l0 for a base, when one is committed for exactly its weights (the manifest's sha256 is one of
 * `baseSha256s`: the file's own, or that of the file it was re-encoded from): an adapter trained on other
 * weights would route at random, so a mismatch yields nothing.
 */
export function findTrainedRouter(
  baseSha256s: readonly string[],
  dir: string = TRAINED_ROUTER_DIR,
): { path: string; manifest: TrainedRouterManifest } | undefined {
  const manifestPath = `${dir}/manifest.json`;
  if (!existsSync(manifestPath)) return undefined;
  const manifest = trainedRouterManifestSchema.parse(JSON.parse(readFileSync(manifestPath, "utf8")));
  const path = `${dir}/${manifest.adapter}`;
  if (!baseSha256s.includes(manifest.baseSha256) || !existsSync(path)) return undefined;
  return { path, manifest };
}
