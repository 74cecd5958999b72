import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_ADAPTER_IDS } from "../../schema/wire/v2/index.ts";
import { requestRoute } from "../harness/generate-requests.ts";
import { answerInput, collectAnswer } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { BARE_BASE_ADAPTER, startTestNode, type TestNode } from "../harness/start-test-node.ts";

const PROMPTS = ["user: write a haiku about the sea\nassistant:", "user: fix my code please\nassistant:"];

describe.each([
  { model: "generated tiny llama", pick: (m: ReturnType<typeof inject<"models">>) => m },
  {
    model: "llama.cpp-converted llama-2-tiny-random fixture",
    pick: (m: ReturnType<typeof inject<"models">>) => {
      if (!m.fixture) throw new Error("fixture model missing: ../shared/fixtures/llama-2-tiny-random.gguf");
      return { base: m.fixture.base, adapters: m.fixture.adapters };
    },
  },
])("LoRA adapters on the $model", ({ pick }) => {
  let nats: NatsServerHandle;
  let t: TestNode;
  beforeAll(async () => {
    nats = await startNatsServer();
    t = await startTestNode({ natsUrl: nats.url, models: pick(inject("models")) });
  });
  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
    await t?.stop();
    await nats?.dispose();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  it("each adapter answers differently from the bare base for the same view", async () => {
    for (const [p, view] of PROMPTS.entries()) {
      const base = await collectAnswer(t.client, answerInput(`base-${p}`, BARE_BASE_ADAPTER, view));
      expect(base.text.length).toBeGreaterThan(0);
      const outputs = new Set<string>();
      for (const adapter of DEFAULT_ADAPTER_IDS) {
        const answer = await collectAnswer(t.client, answerInput(`lora-${p}`, adapter, view));
        expect(answer.text, `adapter ${adapter}`).not.toBe(base.text);
        outputs.add(answer.text);
      }
      expect(outputs.size).toBeGreaterThan(1);
    }
  });

  it("reports distinct revisions for LoRA adapters and the base revision for the bare one", () => {
    const revisions = new Map(t.engine.adapters().map((a) => [a.id, a.revision]));
    expect(revisions.get(BARE_BASE_ADAPTER)).toBe(t.engine.baseModel.revision);
    expect(new Set(DEFAULT_ADAPTER_IDS.map((id) => revisions.get(id))).size).toBe(DEFAULT_ADAPTER_IDS.length);
  });

  it("routes under the grammar on this model too", async () => {
    const result = await requestRoute(t.client, {
      requestId: "fixture-route",
      slotKey: "fixture",
      prompt: "user: build me a dashboard\nlabel:",
      timeoutMs: 10_000,
    });
    expect(["chat", "agent", "coding", "genui"]).toContain(result.label);
  });
});
