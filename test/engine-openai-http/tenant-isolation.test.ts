import { http } from "msw";
import { describe, expect, it } from "vitest";
import type { EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { createOpenAiHttpEngine } from "../../gpu-nodes/src/engine/openai-http/openai-http-engine.ts";
import {
  DEFAULT_VLLM_LORAS,
  LLAMA_URL,
  VLLM_URL,
  generateRequest,
  llamaServerInitHandlers,
  llamaServerOptions,
  useMockEngineServer,
  vllmInitHandlers,
  vllmOptions,
  type LlamaServerSlotReply,
} from "./engine-fixtures.ts";
import {
  llamaServerCompletionPayloads,
  sseResponse,
  toSseFrames,
  vllmCompletionPayloads,
} from "./fake-engine-replies.ts";

const { server, seen } = useMockEngineServer();

const TENANT_A = "tenant-acme-0001";
const TENANT_B = "tenant-globex-0002";

function recordCompletions(url: string, frames: string[]) {
  const bodies: Array<Record<string, unknown>> = [];
  const handler = http.post(`${url}/v1/completions`, async ({ request }) => {
    bodies.push((await request.json()) as Record<string, unknown>);
    return sseResponse(frames);
  });
  return { bodies, handler };
}

const vllmReply = toSseFrames(
  vllmCompletionPayloads({
    model: "any",
    pieces: ["ok"],
    finishReason: "stop",
    usage: { prompt: 4, completion: 1, cached: 0 },
  }),
);

const llamaReply = toSseFrames(
  llamaServerCompletionPayloads({
    pieces: ["ok"],
    finishReason: "stop",
    usage: { prompt: 4, completion: 1, cached: 0 },
    timings: { cache_n: 0, prompt_n: 4, predicted_n: 1 },
  }),
);

describe("vLLM cache_salt", () => {
  async function saltsFor(
    requests: ReadonlyArray<Partial<EngineGenerateRequest>>,
    cacheSaltSecret?: string,
  ): Promise<unknown[]> {
    const completions = recordCompletions(VLLM_URL, vllmReply);
    server.use(...vllmInitHandlers(DEFAULT_VLLM_LORAS), completions.handler);
    const engine = await createOpenAiHttpEngine(vllmOptions({ cacheSaltSecret }));
    for (const request of requests) await engine.generate(generateRequest(request));
    return completions.bodies.map((body) => body["cache_salt"]);
  }

  it("is one salt per tenant, across conversations and adapters, and another for another tenant", async () => {
    const salts = await saltsFor([
      { tenantId: TENANT_A, conversationId: "conv-1", adapter: "chat" },
      { tenantId: TENANT_A, conversationId: "conv-2", adapter: "coding" },
      { tenantId: TENANT_B, conversationId: "conv-1", adapter: "chat" },
    ]);
    const [a1, a2, b] = salts;
    expect(a1).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a2).toBe(a1);
    expect(b).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b).not.toBe(a1);
  });

  it("never carries the tenant id, and is stable across engine starts", async () => {
    const first = await saltsFor([{ tenantId: TENANT_A }]);
    const again = await saltsFor([{ tenantId: TENANT_A }]);
    expect(again).toEqual(first);
    for (const salt of first) {
      expect(String(salt)).not.toContain(TENANT_A);
      expect(String(salt)).not.toContain("acme");
    }
  });

  it("follows MOL_CACHE_SALT_SECRET: another secret, other salts", async () => {
    const derived = await saltsFor([{ tenantId: TENANT_A }]);
    const secretOne = await saltsFor([{ tenantId: TENANT_A }], "secret-one");
    const secretTwo = await saltsFor([{ tenantId: TENANT_A }], "secret-two");
    expect(secretOne[0]).not.toBe(derived[0]);
    expect(secretTwo[0]).not.toBe(secretOne[0]);
  });

  it("gives a request without a tenant the fixed untenanted salt, never none", async () => {
    const salts = await saltsFor([{}, { conversationId: "conv-9", adapter: "l0" }]);
    expect(salts).toEqual(["mol-untenanted", "mol-untenanted"]);
  });
});

describe("llama-server id_slot", () => {
  async function slotsFor(
    requests: ReadonlyArray<Partial<EngineGenerateRequest>>,
    slots: LlamaServerSlotReply = { count: 4, from: "slots" },
  ): Promise<{ slots: unknown[]; warnings: string[]; bodies: Array<Record<string, unknown>> }> {
    const completions = recordCompletions(LLAMA_URL, llamaReply);
    server.use(...llamaServerInitHandlers(undefined, slots), completions.handler);
    const warnings: string[] = [];
    const engine = await createOpenAiHttpEngine(
      llamaServerOptions({ warn: (message) => warnings.push(message) }),
    );
    for (const request of requests) await engine.generate(generateRequest(request));
    const { bodies } = completions;
    return { slots: bodies.map((body) => body["id_slot"]), warnings, bodies };
  }

  it("pins every hop of one conversation on one adapter to one slot", async () => {
    const hop = { tenantId: TENANT_A, conversationId: "conv-7", adapter: "chat" };
    const { slots, warnings } = await slotsFor([hop, { ...hop, prompt: "longer view" }, hop]);
    expect(warnings).toEqual([]);
    const [first] = slots;
    expect(first).toEqual(expect.any(Number));
    expect(slots).toEqual([first, first, first]);
  });

  it("keeps the slot across engine starts", async () => {
    const hop = { tenantId: TENANT_A, conversationId: "conv-7", adapter: "chat" };
    const first = await slotsFor([hop]);
    const again = await slotsFor([hop]);
    expect(again.slots).toEqual(first.slots);
  });

  it("spreads conversations, adapters and tenants over every slot in range", async () => {
    const requests: Array<Partial<EngineGenerateRequest>> = [];
    for (let index = 0; index < 40; index += 1) {
      requests.push({
        tenantId: index % 2 === 0 ? TENANT_A : TENANT_B,
        conversationId: `conv-${index}`,
        adapter: index % 3 === 0 ? "coding" : "chat",
      });
    }
    const { slots } = await slotsFor(requests);
    for (const slot of slots) expect(slot).toEqual(expect.any(Number));
    expect(new Set(slots)).toEqual(new Set([0, 1, 2, 3]));
  });

  it("mixes the tenant into the choice: one conversation id for two tenants lands on different slots", async () => {
    // Over many ids, a tenant-blind choice would agree every time; a 4-slot hash agrees about a quarter of it.
    const requests: Array<Partial<EngineGenerateRequest>> = [];
    for (let index = 0; index < 20; index += 1) {
      for (const tenantId of [TENANT_A, TENANT_B]) {
        requests.push({ tenantId, conversationId: `shared-${index}`, adapter: "chat" });
      }
    }
    const { slots } = await slotsFor(requests);
    let agreeing = 0;
    for (let index = 0; index < slots.length; index += 2) {
      if (slots[index] === slots[index + 1]) agreeing += 1;
    }
    expect(agreeing).toBeLessThan(15);
  });

  it("reads the slot count from GET /props when GET /slots is off", async () => {
    const { slots, warnings } = await slotsFor(
      [
        { tenantId: TENANT_A, conversationId: "conv-1" },
        { tenantId: TENANT_A, conversationId: "conv-2" },
      ],
      { count: 1, from: "props" },
    );
    expect(slots).toEqual([0, 0]);
    expect(warnings).toEqual([]);
    expect(seen.slice(0, 3)).toEqual(["GET /slots", "GET /props", "GET /lora-adapters"]);
  });

  it("sends no id_slot, and warns once, when the server tells no slot count", async () => {
    const { bodies, warnings } = await slotsFor(
      [
        { tenantId: TENANT_A, conversationId: "conv-1" },
        { tenantId: TENANT_B, conversationId: "conv-2" },
      ],
      "untold",
    );
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      expect(body).not.toHaveProperty("id_slot");
      // The LoRA list with explicit scales stays as it was.
      expect(body["lora"]).toEqual([
        { id: 0, scale: 1 },
        { id: 1, scale: 0 },
        { id: 2, scale: 0 },
      ]);
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/slot count.*not pinned/);
  });

  it("sends no tenant id to llama-server", async () => {
    const { bodies } = await slotsFor([{ tenantId: TENANT_A }]);
    expect(JSON.stringify(bodies)).not.toContain(TENANT_A);
  });
});
