import { LlamaModel } from "node-llama-cpp";
import { OverloadedError } from "../../schema/wire/v2/index.ts";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import type { Engine, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { createLlamaEngine } from "../../gpu-nodes/src/engine/llama/create-llama-engine.ts";
import { buildTinyEngineOptions } from "../harness/start-test-node.ts";

// Two adapters without a LoRA and one with: the bare two share one llama.cpp context, so their hops batch together.
let engine: Engine;
let contextsCreated: Array<{ sequences: number | undefined; lora: boolean }>;

beforeAll(async () => {
  const createContext = vi.spyOn(LlamaModel.prototype, "createContext");
  const models = inject("models");
  try {
    engine = await createLlamaEngine(
      buildTinyEngineOptions(models, {
        adapters: [{ id: "chat" }, { id: "l0", loraPath: models.adapters.l0 }, { id: "agent" }],
        slotsPerAdapter: 1,
        summarySlotsPerAdapter: 0,
      }),
    );
    contextsCreated = createContext.mock.calls.map(([options]) => ({
      sequences: options?.sequences,
      lora: options?.lora !== undefined,
    }));
  } finally {
    createContext.mockRestore();
  }
});
afterAll(async () => {
  await engine.close();
});

const VIEW = "system: you are a specialist.\nuser: what is a KV cache?\nassistant:";

function request(adapter: string, conversationId: string, prompt: string): EngineGenerateRequest {
  return {
    adapter,
    conversationId,
    prompt,
    maxTokens: 8,
    temperature: 0,
    topP: 1,
    topK: 1,
    stop: [],
    signal: new AbortController().signal,
  };
}

describe("adapters on the bare base share one context", () => {
  it("creates one context for both bare adapters' slots and one for the LoRA adapter", () => {
    expect(contextsCreated).toEqual([
      { sequences: 2, lora: false },
      { sequences: 1, lora: true },
    ]);
  });

  it("keeps each adapter's KV slots its own: the same conversation on another adapter reuses nothing", async () => {
    const chat = await engine.generate(request("chat", "x", VIEW));
    const agent = await engine.generate(request("agent", "x", VIEW));
    expect(chat.usage.cachedPromptTokens).toBe(0);
    expect(agent.usage.cachedPromptTokens).toBe(0);
    // Same weights, greedy: the two adapters' sequences of the one context answer alike.
    expect(agent.text).toBe(chat.text);

    const next = await engine.generate(
      request("chat", "x", `${VIEW}${chat.text}\nuser: and then?\nassistant:`),
    );
    expect(next.usage.cachedPromptTokens).toBeGreaterThan(0);
  });

  it("runs hops of both adapters at once, each on its own sequence", async () => {
    const results = await Promise.all([
      engine.generate(request("chat", "y", VIEW)),
      engine.generate(request("agent", "y", VIEW)),
      engine.generate(request("chat", "x", VIEW)),
    ]);
    expect(results.map((r) => r.usage.completionTokens > 0)).toEqual([true, true, true]);
    expect(engine.snapshot().map((s) => [s.adapter, s.totalSlots, s.freeSlots])).toEqual([
      ["chat", 1, 1],
      ["l0", 1, 1],
      ["agent", 1, 1],
    ]);
  });
});

describe("summary slots of the adapters on the bare base", () => {
  it("are one pool: one adapter's summaries use every bare adapter's summary slots at once", async () => {
    // One summary slot per adapter and no waiting: a pool per adapter would refuse chat's second summary.
    const pooled = await createLlamaEngine(
      buildTinyEngineOptions(inject("models"), {
        adapters: [{ id: "chat" }, { id: "agent" }],
        slotsPerAdapter: 1,
        summarySlotsPerAdapter: 1,
        maxWaitingPerAdapter: 0,
      }),
    );
    try {
      const summary = (conversationId: string, prompt = VIEW) =>
        pooled.generate({ ...request("chat", conversationId, prompt), maxTokens: 16, lane: "summary" });
      await Promise.all([summary("a"), summary("b")]);
      // Both slots busy: a third summary is refused, as the two pools' waiting allowances (0) add up to none.
      const [c, d, e] = await Promise.allSettled([summary("c"), summary("d"), summary("e")]);
      expect([c.status, d.status, e.status]).toEqual(["fulfilled", "fulfilled", "rejected"]);
      expect(e.status === "rejected" ? e.reason : undefined).toBeInstanceOf(OverloadedError);
      // A slot of the pool stays bound to its (adapter, conversation): the next summary of "d" reuses its view.
      const next = await summary("d", `${VIEW}${d.status === "fulfilled" ? d.value.text : ""}\nuser: more\n`);
      expect(next.usage.cachedPromptTokens).toBeGreaterThan(0);
      // Answer slots stay each adapter's own, as the heartbeat reports them.
      expect(pooled.snapshot().map((s) => [s.adapter, s.totalSlots, s.freeSlots])).toEqual([
        ["chat", 1, 1],
        ["agent", 1, 1],
      ]);
    } finally {
      await pooled.close();
    }
  });
});
