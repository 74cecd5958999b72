import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatHelp } from "../../infra/cli/cli-help.ts";
import { runCliInMemory } from "../cli/run-cli-in-memory.ts";
import { writeSmallBaseGguf, writeSmallLoraGguf } from "./model-files.ts";

const VENTI = "infra/plan/venti.json";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "molmesh-plan-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeSpec(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("molmesh plan", { timeout: 20_000 }, () => {
  it("prints Venti's 774.8B vs 2.976T, a 74.0 % reduction, from the shipped spec", async () => {
    const run = await runCliInMemory({ argv: ["plan", "--spec", VENTI] });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^ {2}MoL layout {9}774\.8B {4}one base 744B \+ adapters 30\.8B$/m);
    expect(run.stdout).toMatch(/^ {2}Replicated layout {2}2\.976T {4}one base per specialist: 4 × 744B/m);
    expect(run.stdout).toMatch(/^ {2}Reduction {10}74\.0 % {4}/m);
    expect(run.stdout).toMatch(/^ {2}MoL node {11}1\.409 TiB {3}base once \+ every adapter; serves all 4/m);
    expect(run.stdout).toContain("molmesh plan: infra/plan/venti.json (spec; bf16, 2 bytes per parameter)");
    expect(run.requests).toEqual([]);
  });

  it("needs no mesh: a broken MOL_BASE_URL does not matter", async () => {
    const run = await runCliInMemory({ argv: ["plan", "--spec", VENTI], env: { MOL_BASE_URL: "not a url" } });
    expect(run.code).toBe(0);
  });

  it("gives the exact figures with --json", async () => {
    const run = await runCliInMemory({ argv: ["plan", "--spec", VENTI, "--json"] });

    const report = JSON.parse(run.stdout) as {
      plan: { mol: { parameters: number }; replicated: { parameters: number }; reduction: number };
      dtype: unknown;
    };
    expect(report.plan.mol.parameters).toBe(774_800_000_000);
    expect(report.plan.replicated.parameters).toBe(2_976_000_000_000);
    expect(report.plan.reduction).toBeCloseTo(0.73965054, 8);
    expect(report.dtype).toEqual({ name: "bf16", bytesPerParameter: 2 });
  });

  it("plans GGUF files given as --base and --adapter", async () => {
    const base = join(dir, "base.gguf");
    const lora = join(dir, "lora.gguf");
    await writeSmallBaseGguf(base);
    await writeSmallLoraGguf(lora);

    const run = await runCliInMemory({
      argv: ["plan", "--base", base, "--adapter", lora, "--adapter", lora],
    });

    // MoL 5,280 + 2·384 = 6,048; replicated 2 · 5,280 = 10,560; 1 − 6,048 / 10,560 = 42.7 %.
    // MoL node 8,704 + 2·1,536 + 16,384 KV = 28,160 B; a replicated node 8,704 + 16,384 = 25,088 B.
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/MoL layout {9}6\.048K /);
    expect(run.stdout).toMatch(/Replicated layout {2}10\.56K /);
    expect(run.stdout).toMatch(/Reduction {10}42\.7 % /);
    expect(run.stdout).toContain("KV cache 1 slot × 256 tokens = 16 KiB");
    expect(run.stdout).toMatch(/MoL node {11}27\.5 KiB /);
    expect(run.stdout).toMatch(/Replicated node {4}24\.5 KiB {2}.*\(2 nodes: 49 KiB\)/);

    const noKv = await runCliInMemory({
      argv: ["plan", "--base", base, "--adapter", lora, "--slots", "0", "--specialists", "3", "--json"],
    });
    const plan = (JSON.parse(noKv.stdout) as { plan: { node: unknown; reduction: number } }).plan;
    expect(plan.node).toEqual({
      kvCacheBytes: 0,
      mol: 10_240,
      replicatedPerNode: 8704,
      replicatedAllNodes: 26_112,
    });
    expect(plan.reduction).toBeCloseTo(1 - 5664 / 15_840, 12);
  });

  it("reads the tiny generated model when given no inputs", async () => {
    const run = await runCliInMemory({ argv: ["plan", "--json"] });

    expect(run.code).toBe(0);
    const { plan } = JSON.parse(run.stdout) as {
      plan: {
        specialists: number;
        base: { parameters: number };
        adapters: { name: string; parameters: number }[];
      };
    };
    // Vocabulary 2,074 × 64 twice (embeddings, output), 2 blocks of 36,992, output norm 64.
    expect(plan.base.parameters).toBe(2 * 64 * 2074 + 2 * 36_992 + 64);
    // Rank 4 on q, k, v, o, gate, up, down: 4·(128 + 96 + 96 + 128 + 192 + 192 + 192) · 2 blocks.
    expect(plan.adapters.map((adapter) => [adapter.name, adapter.parameters])).toEqual(
      ["l0", "chat", "agent", "coding", "genui"].map((label) => [`tiny-lora-${label}`, 8192]),
    );
    expect(plan.specialists).toBe(4);
  });

  it.each([
    [
      { base_params: "744B", specialists: 4, adapter_params_total: 1 },
      "base_params: Invalid input: expected number",
    ],
    [{ base_params: 744e9, specialist: 4, adapter_params_total: 1 }, "specialists: Invalid input"],
    [{ base_params: 744e9, specialist: 4, adapter_params_total: 1 }, 'Unrecognized key: "specialist"'],
    [{ base_params: 744e9, specialists: 0, adapter_params_total: 1 }, "specialists: Too small"],
    [{ base_params: 744e9, specialists: 4 }, "give exactly one of adapter_params_total or adapter"],
    [
      { base_params: 744e9, specialists: 4, adapter_params_total: 1, dtype: "bf16", bytes_per_param: 2 },
      "give dtype or bytes_per_param, not both",
    ],
    [
      { base_params: 1, specialists: 1, adapter: { rank: 8, layers: 2, target_modules: {} } },
      "adapter.target_modules: needs at least one module",
    ],
    ["{ not json", "is not JSON"],
  ])("rejects a bad spec %j with exit 2", async (content, message) => {
    const path = await writeSpec("bad.json", content);

    const run = await runCliInMemory({ argv: ["plan", "--spec", path] });

    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(message);
    expect(run.stderr).toMatch(/\(see molmesh plan --help\)\n$/);
  });

  it.each([
    [["plan", "--spec", "/nonexistent/spec.json"], "cannot read spec /nonexistent/spec.json: no such file"],
    [["plan", "--spec", VENTI, "--base", "x.gguf"], "--spec describes the whole model"],
    [["plan", "--adapter", "a.gguf"], "--adapter needs the --base model"],
    [["plan", "--base", "b.gguf"], "--base needs at least one --adapter"],
    [
      ["plan", "--base", "/nonexistent/b.gguf", "--adapter", "a.gguf"],
      "no such model file: /nonexistent/b.gguf",
    ],
    [["plan", "--spec", VENTI, "--slots", "2"], "--slots and --context need a kv_cache"],
    [["plan", "--specialists", "0"], "--specialists must be a whole number ≥ 1, got '0'"],
    [["plan", "extra"], "plan takes no arguments, got 'extra'"],
    [["plan", "--limit", "3"], "plan does not take --limit"],
  ])("%j is a usage error", async (argv, message) => {
    const run = await runCliInMemory({ argv: [...argv] });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`molmesh: ${message}`);
  });

  it("has its own help, listed in the general help", async () => {
    const run = await runCliInMemory({ argv: ["plan", "--help"] });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe(formatHelp("plan"));
    expect(run.stdout).toContain("infra/plan/venti.json holds Macaron-V1-Venti's published figures");
    expect(formatHelp()).toContain("molmesh plan [--spec <file.json>");
  });
});
