import { describe, expect, it } from "vitest";
import { WIRE_VERSION, generateRequestSchema } from "../../schema/wire/v2/index.ts";
import type { Engine, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { serveGenerate, type GenerateContext } from "../../gpu-nodes/src/service/generate-handler.ts";

/** An engine that records what it is asked and answers "ok". */
function recordingEngine(seen: EngineGenerateRequest[]): Engine {
  const info = { id: "chat", name: "chat@0123456789ab", revision: "0123456789abcdef", lora: true };
  return {
    kind: "fake",
    baseModel: { name: "base", revision: "r" },
    adapters: () => [info],
    resolveAdapter: () => info,
    generate(request) {
      seen.push(request);
      return Promise.resolve({
        text: "ok",
        finishReason: "stop",
        usage: { promptTokens: 3, cachedPromptTokens: 0, evaluatedPromptTokens: 3, completionTokens: 1 },
        queueMs: 0,
        prefillMs: 1,
        decodeMs: 1,
      });
    },
    loadAdapter: () => Promise.resolve(info),
    unloadAdapter: () => Promise.resolve(),
    snapshot: () => [],
    close: () => Promise.resolve(),
  };
}

async function engineRequestsFor(tenantId: string | undefined): Promise<EngineGenerateRequest[]> {
  const seen: EngineGenerateRequest[] = [];
  const request = generateRequestSchema.parse({
    version: WIRE_VERSION,
    type: "generate",
    requestId: "turn-1.answer.0",
    ...(tenantId === undefined ? {} : { tenantId }),
    adapter: "chat",
    prompt: "Hi",
    slotKey: "conv-1",
    priority: "answer",
    timeoutMs: 10_000,
  });
  const ctx: GenerateContext = {
    engine: recordingEngine(seen),
    nodeId: "node-1",
    now: () => 0,
    signal: new AbortController().signal,
    receivedAt: 0,
    admissionMs: 0,
  };
  await serveGenerate(request, ctx, () => undefined);
  return seen;
}

describe("serveGenerate and the request's tenant", () => {
  it("hands the engine the tenant the request names (its cache isolation keys on it)", async () => {
    const seen = await engineRequestsFor("tenant-a");
    expect(seen.map((request) => request.tenantId)).toEqual(["tenant-a"]);
    expect(seen[0]?.conversationId).toBe("conv-1");
  });

  it("hands the engine no tenant when the request names none", async () => {
    const seen = await engineRequestsFor(undefined);
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toHaveProperty("tenantId");
  });
});
