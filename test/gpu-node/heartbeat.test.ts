import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  DEFAULT_ADAPTER_IDS,
  NODE_STATUS_BUCKET,
  buildNodeStatusKey,
  decodeWireMessage,
  nodeStatusSchema,
  type NodeStatus,
} from "../../schema/wire/v2/index.ts";
import { answerInput, collectAnswer } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({ natsUrl: nats.url, models: inject("models"), nodeId: "beat-node" });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

async function readStatus(): Promise<NodeStatus | undefined> {
  const kv = await new Kvm(t.client).open(NODE_STATUS_BUCKET);
  const entry = await kv.get(buildNodeStatusKey("beat-node"));
  if (!entry || entry.operation !== "PUT") return undefined;
  return decodeWireMessage(nodeStatusSchema, entry.value, "reply");
}

describe("node heartbeat in JetStream KV", () => {
  it("describes the node, its adapters with revisions and free slots", async () => {
    const status = await readStatus();
    expect(status?.nodeId).toBe("beat-node");
    expect(status?.engine).toBe("llama.cpp");
    for (const id of DEFAULT_ADAPTER_IDS) {
      const adapter = status?.adapters.find((a) => a.id === id);
      expect(adapter?.lora).toBe(true);
      expect(adapter?.revision).toMatch(/^sha256:[0-9a-f]{16}$/);
      expect(adapter?.freeSlots).toBe(adapter?.totalSlots);
    }
    expect(status?.inFlight).toBe(0);
  });

  it("advertises the served model: chat format (plain for the template-less generated model), context, tokenizer", async () => {
    const status = await readStatus();
    expect(status?.servedModel).toMatchObject({
      templateFamily: "plain",
      contextTokens: 1024,
      tokenizer: "llama",
    });
    expect(status?.servedModel?.warning).toMatch(/unsupported chat format .*plain format/);
  });

  it("lists warm (conversation, adapter) keys after a hop", async () => {
    await collectAnswer(t.client, answerInput("warm-conv", "coding", "user: hi\nassistant:"));
    await expect
      .poll(async () => (await readStatus())?.adapters.find((a) => a.id === "coding")?.warmConversations, {
        timeout: 3_000,
      })
      .toContain("warm-conv");
  });

  it("reports its prefill rate and hop time once it prefilled a view", async () => {
    // Only short views so far: nothing timed, so no rate is claimed.
    expect((await readStatus())?.load).toBeUndefined();
    const view = `user: ${"tell me about the weather in the hills today. ".repeat(12)}\nassistant:`;
    await collectAnswer(t.client, answerInput("rate-conv", "chat", view));
    await expect
      .poll(async () => (await readStatus())?.load?.prefillTokensPerSecond, { timeout: 3_000 })
      .toBeGreaterThan(0);
    expect((await readStatus())?.load?.hopMs).toBeGreaterThan(0);
  });

  it("removes the node's entry when it stops", async () => {
    await t.node.stop(0);
    expect(await readStatus()).toBeUndefined();
  });
});
