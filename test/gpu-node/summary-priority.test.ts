import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Engine, EngineConstraint, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { createLlamaEngine } from "../../gpu-nodes/src/engine/llama/create-llama-engine.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { buildTinyEngineOptions, startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestNode({ natsUrl: nats.url, models: inject("models") });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const VIEW = "system: you are the chat specialist.\nuser: what is a KV cache?\nassistant:";
/** Literals a grammar forces, so the tiny model cannot end either generation early with an end-of-text token. */
const LONG_SUMMARY = "the user asked and the specialist answered ".repeat(12);
const LONG_ANSWER = "a cache of keys and values ".repeat(8);

function forcing(literal: string): EngineConstraint {
  return {
    type: "json_schema",
    schema: {
      type: "object",
      properties: { line: { type: "string", enum: [literal] } },
      required: ["line"],
      additionalProperties: false,
    },
  };
}

function generateRequest(overrides: Partial<EngineGenerateRequest>): EngineGenerateRequest {
  return {
    adapter: "chat",
    conversationId: "c",
    prompt: VIEW,
    maxTokens: 200,
    temperature: 0,
    topP: 1,
    topK: 1,
    stop: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/**
 * Starts a long summary of conversation `c`; once it decodes, the next turn's answer of `c` on the same adapter
 * (its own slot). Counts the summary's chunks that arrived while the answer decoded.
 */
async function answerDuringSummary(engine: Engine) {
  let answering = false;
  let summaryChunksDuringAnswer = 0;
  let decoding!: () => void;
  const summaryDecodes = new Promise<void>((resolve) => (decoding = resolve));
  const summary = engine.generate(
    generateRequest({
      prompt: `${VIEW} a cache of keys and values.\nsummarize the turn above in one line:`,
      lane: "summary",
      maxTokens: 800,
      constraint: forcing(LONG_SUMMARY),
      onTextDelta: () => {
        decoding();
        if (answering) summaryChunksDuringAnswer++;
      },
    }),
  );
  await summaryDecodes;
  answering = true;
  const answer = await engine.generate(
    generateRequest({ prompt: `${VIEW} tell me more.`, constraint: forcing(LONG_ANSWER) }),
  );
  answering = false;
  return { summary: await summary, answer, summaryChunksDuringAnswer };
}

describe("summaries yield to answers", () => {
  it("pauses a summary while the next answer decodes, and the summary still completes in full", async () => {
    const { summary, answer, summaryChunksDuringAnswer } = await answerDuringSummary(t.engine);
    expect(answer.usage.completionTokens).toBeGreaterThan(20);
    // At most the token that was decoding when the answer came in.
    expect(summaryChunksDuringAnswer).toBeLessThanOrEqual(2);
    expect(JSON.parse(summary.text)).toEqual({ line: LONG_SUMMARY });
    expect(summary.finishReason).toBe("stop");
    expect(t.engine.priority?.()).toMatchObject({ paused: 0, latencyActive: 0 });
    const metrics = await t.node.metrics.registry.metrics();
    const pauses = /^molmesh_summary_pauses_total\{[^}]*\} (\d+)$/m.exec(metrics)?.[1];
    expect(Number(pauses)).toBeGreaterThan(0);
  });

  it("holds a summary back only as long as it may, or until another summary finds its pool full", async () => {
    // One summary slot for chat (a LoRA, so a pool of its own): a second summary has to wait for the first.
    const engine = await createLlamaEngine(
      buildTinyEngineOptions(inject("models"), { summarySlotsPerAdapter: 1, contextSize: 2048 }),
    );
    try {
      const answerDone = { at: Infinity };
      const firstChunkAt: Record<string, number> = {};
      const summaryOf = (conversationId: string, deferrableMs?: number) =>
        engine.generate(
          generateRequest({
            conversationId,
            prompt: `${VIEW} keys and values.\nsummarize the turn above in one line:`,
            lane: "summary",
            maxTokens: 800,
            constraint: forcing(LONG_SUMMARY),
            ...(deferrableMs === undefined ? {} : { deferrableMs }),
            onTextDelta: () => (firstChunkAt[conversationId] ??= performance.now()),
          }),
        );
      let answering!: () => void;
      const answerDecodes = new Promise<void>((resolve) => (answering = resolve));
      const answer = engine
        .generate(
          generateRequest({
            conversationId: "a",
            prompt: `${VIEW} tell me everything.`,
            maxTokens: 1200,
            constraint: forcing("a cache of keys and values ".repeat(120)),
            onTextDelta: () => answering(),
          }),
        )
        .then((result) => ((answerDone.at = performance.now()), result));
      await answerDecodes;
      // Its own bound, 150 ms: it decodes beside the answer once that passed.
      const bounded = summaryOf("b", 150);
      const started = performance.now();
      await expect.poll(() => firstChunkAt.b, { timeout: 5_000, interval: 5 }).toBeDefined();
      expect((firstChunkAt.b ?? 0) - started).toBeGreaterThanOrEqual(140);
      await bounded;
      // Unbounded but for the engine's 15 s: held back until the next summary finds the one slot taken.
      const held = summaryOf("c");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(firstChunkAt.c).toBeUndefined();
      const next = summaryOf("d");
      await expect.poll(() => firstChunkAt.c, { timeout: 5_000, interval: 5 }).toBeDefined();
      expect(firstChunkAt.c).toBeLessThan(answerDone.at);
      await Promise.all([held, next]);
      // Every summary started while the answer still decoded: none waited for the engine to be idle.
      await answer;
      expect(firstChunkAt.b).toBeLessThan(answerDone.at);
    } finally {
      await engine.close();
    }
  });

  it("with MOL_SUMMARY_YIELD=0 the same summary keeps decoding next to the answer", async () => {
    const plain = await createLlamaEngine(
      buildTinyEngineOptions(inject("models"), { hopPriority: { enabled: false } }),
    );
    try {
      const { summary, summaryChunksDuringAnswer } = await answerDuringSummary(plain);
      expect(summaryChunksDuringAnswer).toBeGreaterThan(5);
      expect(JSON.parse(summary.text)).toEqual({ line: LONG_SUMMARY });
      expect(plain.priority?.().pauses).toBe(0);
    } finally {
      await plain.close();
    }
  });
});
