import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { buildDefaultHarness } from "../../schema/harness/default-harness.ts";
import { BadRequestError, UnknownAdapterError } from "../../schema/wire/v2/index.ts";
import type { Engine, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { createLlamaEngine } from "../../gpu-nodes/src/engine/llama/create-llama-engine.ts";
import { writeGgufFile } from "../../gpu-nodes/src/models/gguf/writer.ts";
import { buildLoraAdapter } from "../../gpu-nodes/tools/test-models/lora-adapter.ts";
import { TINY_LLAMA_DEFAULTS, buildTinyLlama } from "../../gpu-nodes/tools/test-models/tiny-llama.ts";
import { renderExamplePrompt } from "../bench/routing/render-router-prompts.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { BARE_BASE_ADAPTER, buildTinyEngineOptions } from "../harness/start-test-node.ts";

// One engine, as a node runs it: chat and l0 with LoRAs, two adapters on the bare base. Revisions come and go.
let engine: Engine;
let workDir: string;
const models = inject("models");
const retrainedChat = models.retrained?.chat ?? "";

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "molmesh-revisions-"));
  engine = await createLlamaEngine(
    buildTinyEngineOptions(models, {
      adapters: [
        { id: "chat", loraPath: models.adapters.chat },
        { id: "l0", loraPath: models.adapters.l0 },
        { id: BARE_BASE_ADAPTER },
        { id: "agent" },
      ],
      // The router's view needs the harness's context on this byte-level tokenizer (router-slot-priming.test.ts).
      contextSize: 4096,
      primeRouterSlots: true,
    }),
  );
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await engine?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const VIEW = "system: you are a specialist.\nuser: write a haiku about the sea\nassistant:";

function request(adapter: string, conversationId: string, overrides: Partial<EngineGenerateRequest> = {}) {
  return {
    adapter,
    conversationId,
    prompt: VIEW,
    maxTokens: 12,
    temperature: 0,
    topP: 1,
    topK: 1,
    stop: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

const run = promisify(execFile);
const WRITE_LORA = join(REPO_ROOT, "test", "harness", "write-lora-file.ts");

const nameOf = (requested: string): string => {
  const name = engine.resolveAdapter(requested)?.name;
  if (name === undefined) throw new Error(`${requested} is not held`);
  return name;
};

/** Resident memory of this process (the engine runs in it), in bytes. */
const rss = (): number => process.memoryUsage().rss;

describe("adapter revisions in a running llama.cpp engine", () => {
  it("serves a second revision beside the first: both answer, differently; the bare label stays on the first", async () => {
    const first = nameOf("chat");
    const contexts = vi.spyOn(LlamaModel.prototype, "createContext");
    try {
      const second = await engine.loadAdapter({ label: "chat", path: retrainedChat });
      expect(second).toMatchObject({ id: "chat", lora: true });
      expect(second.name).toMatch(/^chat@[0-9a-f]{12}$/);
      expect(second.name).not.toBe(first);
      // Loading what is held returns it: no second context.
      expect(await engine.loadAdapter({ label: "chat", path: retrainedChat })).toEqual(second);
      expect(contexts).toHaveBeenCalledTimes(1);
      expect(engine.adapters().map((a) => a.name)).toEqual([
        first,
        nameOf("l0"),
        nameOf(BARE_BASE_ADAPTER),
        nameOf("agent"),
        second.name,
      ]);
      expect(
        engine
          .snapshot()
          .filter((s) => s.adapter === "chat")
          .map((s) => s.name),
      ).toEqual([first, second.name]);

      const onFirst = await engine.generate(request(first, "a"));
      const onSecond = await engine.generate(request(second.name, "a"));
      const onLabel = await engine.generate(request("chat", "b"));
      expect(onFirst.text.length).toBeGreaterThan(0);
      expect(onSecond.text).not.toBe(onFirst.text);
      expect(onLabel.text).toBe(onFirst.text);
      // KV slots are the revision's own: the same conversation on the other revision reused nothing.
      expect(onSecond.usage.cachedPromptTokens).toBe(0);
    } finally {
      contexts.mockRestore();
    }
  });

  it("unloads a revision after its running hop ends, refusing new hops at once and moving the label on", async () => {
    const first = nameOf("chat");
    const second = engine.adapters().find((a) => a.id === "chat" && a.name !== first)?.name ?? "";
    const expected = await engine.generate(request(second, "c"));
    let started: () => void = () => undefined;
    const decoding = new Promise<void>((resolve) => {
      started = resolve;
    });
    const running = engine.generate(request(first, "d", { maxTokens: 48, onTextDelta: () => started() }));
    await decoding;
    let unloaded = false;
    const unloading = engine.unloadAdapter(first).then(() => {
      unloaded = true;
    });
    await expect(engine.generate(request(first, "e"))).rejects.toBeInstanceOf(UnknownAdapterError);
    expect(engine.resolveAdapter("chat")?.name).toBe(second);
    expect(engine.adapters().map((a) => a.name)).not.toContain(first);
    expect(unloaded).toBe(false);
    const finished = await running;
    expect(finished.finishReason).toBe("length");
    expect(finished.usage.completionTokens).toBe(48);
    await unloading;
    expect((await engine.generate(request("chat", "c"))).text).toBe(expected.text);
  });

  it("a failed load throws bad_request and leaves the engine as it was", async () => {
    const before = engine.adapters();
    const wider = buildTinyLlama({ ...TINY_LLAMA_DEFAULTS, embeddingLength: 128 });
    const otherBase = join(workDir, "other-base-lora.gguf");
    await writeGgufFile(otherBase, buildLoraAdapter({ base: wider, label: "chat" }));
    const corrupt = join(workDir, "corrupt.gguf");
    await writeFile(corrupt, "GGUF but not really a LoRA");
    const attempts = [
      [otherBase, /tensor blk\.0\.attn_q\.weight is 64×64 in the base.*another base/],
      [corrupt, /not a readable GGUF file/],
      [join(workDir, "missing.gguf"), /cannot be read/],
      [models.base, /not a LoRA adapter/],
    ] as const;
    for (const [path, reason] of attempts) {
      const failure = engine.loadAdapter({ label: "chat", path });
      await expect(failure).rejects.toBeInstanceOf(BadRequestError);
      await expect(failure).rejects.toThrow(reason);
    }
    expect(engine.adapters()).toEqual(before);
    expect(engine.failedAdapters).toEqual([]);
  });

  it("a bare-base label loaded later gets a context of its own, or the room an unloaded one left", async () => {
    const contexts = vi.spyOn(LlamaModel.prototype, "createContext");
    try {
      // The shared context was sized at start for the two bare adapters: it cannot grow.
      const summary = await engine.loadAdapter({ label: "summary" });
      expect(summary).toMatchObject({ id: "summary", lora: false, revision: engine.baseModel.revision });
      expect(contexts.mock.calls.map(([options]) => options?.sequences)).toEqual([4]);
      expect((await engine.generate(request("summary", "f"))).text).toBe(
        (await engine.generate(request(BARE_BASE_ADAPTER, "f"))).text,
      );
      await engine.unloadAdapter(summary.name);
      await engine.unloadAdapter(nameOf(BARE_BASE_ADAPTER));
      const again = await engine.loadAdapter({ label: "summary" });
      expect(contexts).toHaveBeenCalledTimes(1);
      expect((await engine.generate(request(again.name, "g"))).usage.completionTokens).toBe(12);
      expect(engine.snapshot().find((s) => s.adapter === "summary")).toMatchObject({ totalSlots: 2 });
    } finally {
      contexts.mockRestore();
    }
  });

  it("a router revision loaded later has its slots primed, as the router's at start", async () => {
    // Any LoRA file makes a new l0 revision; agent's weights serve here.
    const canary = await engine.loadAdapter({ label: "l0", path: models.adapters.agent });
    const served = engine.servedModel;
    if (!served) throw new Error("the llama.cpp engine describes the model it serves");
    const harness = buildDefaultHarness({
      family: served.templateFamily,
      contextTokens: served.contextTokens,
    });
    const prompt = renderExamplePrompt(
      { id: "x", split: "test", label: "chat", message: "hello there" },
      harness,
    );
    const route = await engine.generate(
      request(canary.name, "first-route", {
        prompt,
        constraint: { type: "choice", choices: harness.router.labels },
      }),
    );
    expect(route.usage.cachedPromptTokens).toBeGreaterThan(10);
    await engine.unloadAdapter(canary.name);
  });

  it("unloading frees the revision's context and its LoRA: RSS returns after each load", async () => {
    // LoRAs far larger than the tiny model's (rank 6144, 48 MB of f32) so their memory stands out of the noise,
    // written by another process: generated here, their garbage would be freed in the middle of a measurement.
    const paths: string[] = [];
    for (const seed of [101, 102, 103]) {
      const path = join(workDir, `big-${seed}.gguf`);
      const args = [models.base, path, "coding", String(seed), "6144"];
      await run(process.execPath, ["--import", "tsx", WRITE_LORA, ...args]);
      paths.push(path);
    }
    const loraBytes = (await stat(paths[0] ?? "")).size;
    const rises: number[] = [];
    const afterUnload: number[] = [];
    for (const path of paths) {
      const before = rss();
      const loaded = await engine.loadAdapter({ label: "coding", path });
      await engine.generate(request(loaded.name, "h", { maxTokens: 2 }));
      rises.push(rss() - before);
      await engine.unloadAdapter(loaded.name);
      afterUnload.push(rss());
    }
    // Each load shows its LoRA (llama.cpp copies the tensors into a buffer of its own)...
    for (const rise of rises) expect(rise).toBeGreaterThan(0.8 * loraBytes);
    // ...and, past a first cycle that also makes one-time allocations, two more leave less than half a LoRA
    // behind where kept LoRAs would leave two whole ones. glibc returns buffers this large to the system at
    // once (they are mmap'd); the rest is heap it keeps.
    const [firstCycle = 0, , lastCycle = 0] = afterUnload;
    expect(lastCycle - firstCycle).toBeLessThan(0.5 * loraBytes);
  });
});
