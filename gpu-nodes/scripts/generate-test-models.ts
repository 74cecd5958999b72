/**
 * Generates the tiny test models (idempotent).
 * Usage: tsx gpu-nodes/scripts/generate-test-models.ts [outDir] [fixturePath]
 * or MOLMESH_MODELS_DIR / MOLMESH_FIXTURE_MODEL; defaults: <repo>/.cache/models, <repo>/../shared/fixtures.
 */
import { ensureTestModels, resolveTestModelDefaults } from "../tools/test-models/ensure-test-models.ts";

const defaults = resolveTestModelDefaults();
const outDir = process.argv[2] ?? process.env.MOLMESH_MODELS_DIR ?? defaults.outDir;
const fixturePath = process.argv[3] ?? process.env.MOLMESH_FIXTURE_MODEL ?? defaults.fixturePath;

const startedAt = performance.now();
const paths = await ensureTestModels({ outDir, fixturePath });
const elapsedMs = Math.round(performance.now() - startedAt);

console.log(`test models ready in ${elapsedMs} ms`);
console.log(`  base                ${paths.base}`);
for (const [label, path] of Object.entries(paths.adapters)) console.log(`  lora ${label.padEnd(15)}${path}`);
if (paths.fixture) {
  console.log(`  fixture base        ${paths.fixture.base}`);
  for (const [label, path] of Object.entries(paths.fixture.adapters)) {
    console.log(`  fixture lora ${label.padEnd(7)}${path}`);
  }
} else {
  console.log(`  fixture             (not found at ${fixturePath}; fixture adapters skipped)`);
}
