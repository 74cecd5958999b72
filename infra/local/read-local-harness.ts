import { readFile } from "node:fs/promises";
import { DEFAULT_CONTEXT_TOKENS } from "../../schema/harness/default-harness.ts";
import { buildHarness, parseHarnessOverlay } from "../../schema/harness/harness-config.ts";

/**
 * The harness document for the local edge: `MOL_HARNESS_FILE` (a JSON file) or `MOL_HARNESS` (the JSON itself),
 * laid over the per-model defaults. Checked here against the default profile, so a typo stops `npm start` with
 * the schema's message instead of being logged and ignored by the edge. Returns the Worker var to set.
 */
export async function readLocalHarness(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const text = env.MOL_HARNESS_FILE ? await readFile(env.MOL_HARNESS_FILE, "utf8") : env.MOL_HARNESS;
  const overlay = parseHarnessOverlay(text);
  if (!overlay || text === undefined) return {};
  buildHarness({ family: "plain", contextTokens: DEFAULT_CONTEXT_TOKENS }, overlay);
  return { MOL_HARNESS: JSON.stringify(overlay) };
}
