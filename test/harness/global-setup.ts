import type { TestProject } from "vitest/node";
import {
  ensureTestModels,
  type TestModelPaths,
} from "../../gpu-nodes/tools/test-models/ensure-test-models.ts";
import { TEST_MODELS_DIR, FIXTURE_MODEL_PATH } from "./paths.ts";

declare module "vitest" {
  export interface ProvidedContext {
    models: TestModelPaths;
  }
}

/** Generates the tiny test models once per run (idempotent), and hands their paths to every test file. */
export default async function setup(project: TestProject): Promise<void> {
  const models = await ensureTestModels({ outDir: TEST_MODELS_DIR, fixturePath: FIXTURE_MODEL_PATH });
  project.provide("models", models);
}
