/**
 * Checks an exported l0 GGUF against the PyTorch model it came from: llama.cpp (through the node's own engine)
 * loads base + adapter and scores the labels of the examples the trainer wrote with --check; the two label
 * distributions must agree (quantized matmuls and f32 torch differ a little, a layout bug differs a lot).
 * Usage: tsx gpu-nodes/training/router/check-adapter.ts <base.gguf> <l0.gguf> <prompts.jsonl> <check.jsonl>
 */
import { readFileSync } from "node:fs";
import { fingerprintFile } from "../../src/runtime/fingerprint-file.ts";
import { createLlamaEngine } from "../../src/engine/llama/create-llama-engine.ts";
import { DEFAULT_HARNESS } from "../../../schema/harness/default-harness.ts";

const [basePath, loraPath, promptsPath, checkPath] = process.argv.slice(2);
if (!basePath || !loraPath || !promptsPath || !checkPath) throw new Error("usage: see the header");
const readJsonl = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const prompts = new Map(readJsonl(promptsPath).map((r) => [r["id"], r["prompt"] as string]));
const engine = await createLlamaEngine({
  baseModelPath: basePath,
  adapters: [{ id: "l0", loraPath }],
  threads: 2,
  contextSize: 1024,
  slotsPerAdapter: 1,
  maxWaitingPerAdapter: 8,
  now: () => performance.now(),
  fingerprintFile,
});
let worst = 0;
let agree = 0;
const rows = readJsonl(checkPath);
for (const row of rows) {
  const torch = row["probs"] as Record<string, number>;
  const result = await engine.generate({
    adapter: "l0",
    conversationId: "check",
    prompt: prompts.get(row["id"]) ?? "",
    maxTokens: 24,
    temperature: 0,
    topP: 1,
    topK: 1,
    stop: [],
    constraint: { type: "choice", choices: DEFAULT_HARNESS.router.labels },
    signal: new AbortController().signal,
  });
  const llama = result.choiceProbabilities ?? {};
  const diff = Math.max(...Object.keys(torch).map((k) => Math.abs((torch[k] ?? 0) - (llama[k] ?? 0))));
  const torchBest = Object.entries(torch).sort((a, b) => b[1] - a[1])[0]?.[0];
  if (torchBest === result.text) agree++;
  worst = Math.max(worst, diff);
  console.log(String(row["id"]), "torch", JSON.stringify(torch), "llama.cpp", JSON.stringify(llama));
}
console.log(`argmax agrees on ${agree}/${rows.length}; largest probability difference ${worst.toFixed(4)}`);
await engine.close();
process.exit(agree === rows.length && worst < 0.1 ? 0 : 1);
