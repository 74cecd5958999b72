import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { requestRoute } from "../harness/generate-requests.ts";
import { buildDefaultHarness } from "../../schema/harness/default-harness.ts";
import { renderRouterViewOpening } from "../../schema/harness/render-view-lines.ts";
import { renderExamplePrompt } from "../bench/routing/render-router-prompts.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({
    natsUrl: nats.url,
    models: inject("models"),
    engine: { slotsPerAdapter: 2, contextSize: 4096, primeRouterSlots: true },
  });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

async function route(conversationId: string, view: string) {
  const result = await requestRoute(t.client, {
    requestId: conversationId,
    slotKey: conversationId,
    prompt: view,
    timeoutMs: 20_000,
  });
  return result.usage;
}

describe("router slots primed at start", () => {
  it("a new conversation's first route hop on a slot nobody used reuses the default router view's opening", async () => {
    const served = t.engine.servedModel;
    if (!served) throw new Error("the llama.cpp engine describes the model it serves");
    const harness = buildDefaultHarness({
      family: served.templateFamily,
      contextTokens: served.contextTokens,
    });
    const first = await route(
      "first-user",
      renderExamplePrompt({ id: "x", split: "test", label: "chat", message: "hello, who are you?" }, harness),
    );
    // The opening alone, on the other primed slot: all of it is held but the token the hop must evaluate.
    const opening = renderRouterViewOpening(harness);
    const probe = await route("probe", opening);
    expect(probe.cachedPromptTokens).toBeGreaterThan(10);
    // Where the opening ends in plain text (llama2's "[INST] "), priming stops before it: a few tokens short.
    expect(first.cachedPromptTokens).toBeGreaterThanOrEqual(probe.promptTokens - 6);
  });
});
