import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import {
  NODE_STATUS_BUCKET,
  SPECIALIST_LABELS,
  UnknownAdapterError,
  buildNodeStatusKey,
  decodeWireMessage,
  nodeStatusSchema,
} from "../../schema/wire/v2/index.ts";
import { renderExamplePrompt } from "../bench/routing/render-router-prompts.ts";
import { requestRoute } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let healthy: TestNode;
let broken: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  const models = inject("models");
  // The harness sizes the router's view for its contextTokens (4096): a byte-level tokenizer needs all of it.
  healthy = await startTestNode({
    natsUrl: nats.url,
    models,
    nodeId: "router-ok",
    engine: { contextSize: DEFAULT_HARNESS.contextTokens, slotsPerAdapter: 1 },
  });
  const corrupt = join(tmpdir(), `molmesh-corrupt-l0-${process.pid}.gguf`);
  await writeFile(corrupt, "GGUF but not really a LoRA");
  broken = await startTestNode({
    natsUrl: nats.url,
    models: { ...models, adapters: { ...models.adapters, l0: corrupt } },
    nodeId: "router-broken",
  });
});
afterAll(async () => {
  await healthy.stop();
  await broken.stop();
  await nats.dispose();
});

const route = (t: TestNode, view: string, i: number) =>
  requestRoute(
    t.client,
    {
      requestId: `bad-${i}`,
      slotKey: `bad-${i}`,
      // Straight to one node: the edge would place by heartbeat; here each node is asked by its own subject.
      prompt: view,
      timeoutMs: 20_000,
    },
    { nodeId: t.node.nodeId },
  );

describe("the router on bad input and a broken adapter", () => {
  it("labels an empty, a huge and a binary message, each with a confidence in [0, 1]", async () => {
    const messages = [
      "",
      "x".repeat(200_000),
      "\u0000\u0001\u0002\uFFFD\u0007".repeat(50),
      "🙂".repeat(5000),
    ];
    for (const [i, message] of messages.entries()) {
      const view = renderExamplePrompt(
        { id: `x-${i}`, message, label: "chat", split: "test" },
        DEFAULT_HARNESS,
      );
      const result = await route(healthy, view, i);
      expect(SPECIALIST_LABELS).toContain(result.label);
      expect(result.confidence).toBeGreaterThanOrEqual(1 / SPECIALIST_LABELS.length - 1e-6);
      expect(result.confidence).toBeLessThanOrEqual(1);
    }
  });

  it("a node whose l0 failed to load says so in its heartbeat and refuses route hops with a typed error", async () => {
    const kv = await new Kvm(broken.client).open(NODE_STATUS_BUCKET);
    const entry = await kv.get(buildNodeStatusKey("router-broken"));
    const status = entry ? decodeWireMessage(nodeStatusSchema, entry.value, "reply") : undefined;
    expect(status?.adapters.map((a) => a.id)).not.toContain("l0");
    expect(status?.failedAdapters?.map((a) => a.id)).toEqual(["l0"]);
    await expect(route(broken, "user: hi\nroute:", 99)).rejects.toBeInstanceOf(UnknownAdapterError);
    // Its specialists still serve.
    expect(status?.adapters.map((a) => a.id)).toEqual(expect.arrayContaining([...SPECIALIST_LABELS]));
  });
});
