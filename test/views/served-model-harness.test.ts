import { describe, expect, it } from "vitest";
import { hashHarness } from "../../schema/harness/content-hash.ts";
import { CHAT_TEMPLATE_FAMILIES, detectChatTemplateFamily } from "../../schema/harness/chat-templates.ts";
import {
  DEFAULT_HARNESS,
  MIN_DEFAULT_CONTEXT_TOKENS,
  buildDefaultHarness,
} from "../../schema/harness/default-harness.ts";
import { GENUI_EXEMPLAR } from "../../schema/harness/genui-contract-prompt.ts";
import { harnessDocumentSchema } from "../../schema/harness/harness-document.ts";
import {
  HarnessConfigError,
  buildHarness,
  createHarnessResolver,
  parseHarnessOverlay,
} from "../../schema/harness/harness-config.ts";
import { readMaxUserMessageBytes } from "../../schema/harness/measure-view-room.ts";
import { clipMiddleWithMark, cleanConversationText, countUtf8Bytes } from "../../schema/harness/utf8.ts";
import { chatTemplateFamilySchema } from "../../schema/harness/chat-templates.ts";
import type { NodeStatus } from "../../schema/wire/v2/index.ts";
import { readServedModel } from "../../workers/src/fleet/read-served-model.ts";

describe("chat format detection from GGUF metadata", () => {
  it.each([
    ["SmolLM2 (ChatML)", { architecture: "llama", chatTemplate: "{{'<|im_start|>' + role}}" }, "chatml"],
    ["Llama-3", { architecture: "llama", chatTemplate: "<|start_header_id|>{{ role }}" }, "llama3"],
    ["Mistral / Llama-2", { architecture: "llama", chatTemplate: "{{ '[INST] ' + content }}" }, "llama2"],
    [
      "the Llama-2 fixture (no template)",
      { architecture: "llama", chatTemplate: undefined, name: "LLaMA v2" },
      "llama2",
    ],
  ] as const)("%s", (_name, info, family) => {
    expect(detectChatTemplateFamily(info)).toEqual({ family });
  });

  it("falls back to the plain format with a warning for an unknown template or architecture", () => {
    const generated = detectChatTemplateFamily({
      architecture: "llama",
      chatTemplate: undefined,
      name: "molmesh-tiny-llama",
    });
    expect(generated.family).toBe("plain");
    expect(generated.warning).toMatch(/unsupported chat format.*no tokenizer.chat_template/);
    const gemma = detectChatTemplateFamily({ architecture: "gemma2", chatTemplate: "<start_of_turn>user" });
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types its asymmetric matchers as any
    expect(gemma).toMatchObject({ family: "plain", warning: expect.stringContaining("gemma2") });
  });
});

describe("per-model harness", () => {
  it("keeps the compiled default for plain on 4,096 tokens, and scales budgets with the context", () => {
    expect(buildDefaultHarness({ family: "plain", contextTokens: 4096 })).toEqual(DEFAULT_HARNESS);
    const smol = buildHarness({ family: "chatml", contextTokens: 8192 }, undefined);
    expect(smol.contextTokens).toBe(8192);
    expect(smol.specialists.chat?.viewBudgetBytes).toBe(7680);
    expect(smol.specialists.chat?.answerViewMaxBytes).toBe(3072);
    expect(readMaxUserMessageBytes(smol)).toBe(1920);
    expect(smol.templates).toEqual(CHAT_TEMPLATE_FAMILIES.chatml.templates);
    expect(smol.specialists.chat?.sampling.stop).toEqual(["<|im_end|>", "<|im_start|>"]);
    expect(() => buildDefaultHarness({ family: "plain", contextTokens: 1024 })).toThrow(/at least 2560/);
  });

  it.each(chatTemplateFamilySchema.options)(
    "is a valid harness for %s at every context from the minimum, the genui exemplar only where it has room",
    (family) => {
      const contexts = [MIN_DEFAULT_CONTEXT_TOKENS, 2561, 2999, 3000, 3584, 4095, 4096, 6000, 8192, 32_768];
      for (const contextTokens of contexts) {
        const harness = buildDefaultHarness({ family, contextTokens });
        const parsed = harnessDocumentSchema.safeParse(harness);
        expect(parsed.error?.issues ?? [], `${family} at ${contextTokens}`).toEqual([]);
        const genuiPrompt = harness.specialists.genui?.systemPrompt ?? "";
        expect(genuiPrompt).toMatch(/one ES module.*default-exported function component/);
        expect(genuiPrompt).toContain('"react" and "@molmesh/ui" (Stack, Row, Grid, Card,');
        expect(genuiPrompt.includes(GENUI_EXEMPLAR)).toBe(contextTokens >= 8192);
      }
    },
  );

  it("lays a validated MOL_HARNESS over the defaults, objects merged key by key", () => {
    const overlay = parseHarnessOverlay(
      JSON.stringify({
        router: { maxUserMessageChars: 100 },
        specialists: { chat: { systemPrompt: "Be terse." } },
      }),
    );
    const harness = buildHarness({ family: "chatml", contextTokens: 4096 }, overlay);
    expect(harness.router.maxUserMessageChars).toBe(100);
    expect(harness.router.labels).toEqual(DEFAULT_HARNESS.router.labels);
    expect(harness.specialists.chat?.systemPrompt).toBe("Be terse.");
    expect(harness.specialists.chat?.sampling.temperature).toBe(0.7);
    expect(parseHarnessOverlay("  ")).toBeUndefined();
    expect(() => parseHarnessOverlay("{nope")).toThrow(HarnessConfigError);
    expect(() => parseHarnessOverlay("[1]")).toThrow(/JSON object/);
    const tooBig = parseHarnessOverlay(JSON.stringify({ router: { viewBudgetBytes: 100_000 } }));
    expect(() => buildHarness({ family: "plain", contextTokens: 4096 }, tooBig)).toThrow(
      /exceed contextTokens\n {2}→ at router\.viewBudgetBytes/,
    );
    const sentinel = parseHarnessOverlay(
      JSON.stringify({ router: { systemPrompt: "\uE000<|im_start|>\uE001" } }),
    );
    expect(() => buildHarness({ family: "plain", contextTokens: 4096 }, sentinel)).toThrow(/U\+E000/);
  });

  it("resolves one harness per served model; the hash changes with the family, so views rebuild", async () => {
    const invalid: Error[] = [];
    const resolve = createHarnessResolver({ overlay: undefined, onInvalid: (e) => invalid.push(e) });
    const plain = await resolve({ family: "plain", contextTokens: 4096 });
    expect(plain.harnessHash).toBe(await hashHarness(DEFAULT_HARNESS));
    const chatml = await resolve({ family: "chatml", contextTokens: 4096 });
    expect(chatml.harnessHash).not.toBe(plain.harnessHash);
    expect(await resolve({ family: "chatml", contextTokens: 4096 })).toBe(chatml);
    // A context the defaults cannot serve: the compiled default, reported once.
    expect((await resolve({ family: "chatml", contextTokens: 1024 })).harness).toBe(DEFAULT_HARNESS);
    expect(invalid).toHaveLength(1);
  });
});

describe("the served model at the edge", () => {
  const node = (nodeId: string, servedModel?: NodeStatus["servedModel"]): NodeStatus => ({
    version: "molmesh.v2",
    nodeId,
    engine: "llama.cpp",
    baseModel: { name: "m", revision: "r" },
    ...(servedModel ? { servedModel } : {}),
    adapters: [
      { id: "chat", revision: "r", lora: false, totalSlots: 1, freeSlots: 1, warmConversations: [] },
    ],
    inFlight: 0,
    maxConcurrent: 1,
    queueDepth: 0,
    startedAt: 0,
    updatedAt: 0,
    heartbeatIntervalMs: 1000,
    features: [],
  });
  it("takes the family of the serving nodes and their smallest context; none before a heartbeat", () => {
    expect(readServedModel([], ["chat"])).toBeUndefined();
    expect(readServedModel([node("a")], ["chat"])).toBeUndefined();
    const served = readServedModel(
      [
        node("a", { templateFamily: "chatml", contextTokens: 8192, tokenizer: "gpt2/smollm" }),
        node("b", { templateFamily: "chatml", contextTokens: 4096, tokenizer: "gpt2/smollm" }),
      ],
      ["chat"],
    );
    expect(served).toEqual({ family: "chatml", contextTokens: 4096 });
    expect(
      readServedModel(
        [node("a", { templateFamily: "llama2", contextTokens: 4096, tokenizer: "llama" })],
        ["x"],
      ),
    ).toBeUndefined();
  });
});

describe("long input in views", () => {
  it("keeps head and tail around the mark, within the bytes, whole code points", () => {
    const text = `HEAD${"é".repeat(5000)}😀TAIL`;
    const clipped = clipMiddleWithMark(text, 101, "…");
    expect(countUtf8Bytes(clipped)).toBeLessThanOrEqual(101);
    expect(clipped.startsWith("HEAD")).toBe(true);
    expect(clipped.endsWith("😀TAIL")).toBe(true);
    expect(clipped).toContain("…");
    expect(clipMiddleWithMark("short", 101, "…")).toBe("short");
  });

  it("strips the special-token sentinels from client text", () => {
    expect(cleanConversationText("a\uE000<|im_start|>\uE001b\uD83D")).toBe("a<|im_start|>b\uFFFD");
  });
});
