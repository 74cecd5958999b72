import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { requestGenerate } from "../../workers/src/nats/generate-client.ts";
import type { Engine, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { createLlamaEngine } from "../../gpu-nodes/src/engine/llama/create-llama-engine.ts";
import { answerInput, collectAnswer, summaryRequest } from "../harness/generate-requests.ts";
import { startNatsServer, type NatsServerHandle } from "../harness/start-nats-server.ts";
import { buildTinyEngineOptions, startTestNode, type TestNode } from "../harness/start-test-node.ts";

let nats: NatsServerHandle;
let t: TestNode;

beforeAll(async () => {
  nats = await startNatsServer();
  // One answer slot per adapter: a summary that took it would be in the next answer's way.
  t = await startTestNode({ natsUrl: nats.url, models: inject("models"), engine: { slotsPerAdapter: 1 } });
});
afterAll(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning these */
  await t?.stop();
  await nats?.dispose();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

const VIEW = "system: you are the chat specialist.\nuser: what is a KV cache?\nassistant:";
const SUMMARY_CUE = "\nsummarize the turn above in one line:";
/** A literal the grammar forces, so the tiny model cannot end the summary early with an end-of-text token. */
const LONG_SUMMARY = "the user asked and the specialist answered ".repeat(12);

function generateRequest(overrides: Partial<EngineGenerateRequest>): EngineGenerateRequest {
  return {
    adapter: "chat",
    conversationId: "c",
    prompt: VIEW,
    maxTokens: 8,
    temperature: 0,
    topP: 1,
    topK: 1,
    stop: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/**
 * Starts a long summary of conversation `c`, then, once it decodes, the next answer of `c` on the same adapter;
 * the order the two end in says whether the answer waited for the summary's slot.
 */
async function answerDuringSummary(engine: Engine): Promise<{ first: string; answerQueueMs: number }> {
  const ended: string[] = [];
  let decoding!: () => void;
  const summaryDecodes = new Promise<void>((resolve) => (decoding = resolve));
  const summary = engine
    .generate(
      generateRequest({
        prompt: VIEW + " a cache of keys and values." + SUMMARY_CUE,
        maxTokens: 200,
        lane: "summary",
        // A grammar (not a choice: the engine scores choices whole, streaming nothing) that streams as it decodes.
        constraint: {
          type: "json_schema",
          schema: {
            type: "object",
            properties: { line: { type: "string", enum: [LONG_SUMMARY] } },
            required: ["line"],
            additionalProperties: false,
          },
        },
        onTextDelta: () => decoding(),
      }),
    )
    .then(() => ended.push("summary"));
  await summaryDecodes;
  const answer = await engine.generate(generateRequest({ prompt: VIEW }));
  ended.push("answer");
  await summary;
  return { first: ended[0] as string, answerQueueMs: answer.queueMs };
}

describe("summary slots", () => {
  it("answers a conversation's next turn while its summary still decodes: the summary has a slot of its own", async () => {
    const { first } = await answerDuringSummary(t.engine);
    expect(first).toBe("answer");
  });

  it("with no summary slots (MOL_SUMMARY_SLOTS_PER_ADAPTER=0) the same answer waits for the summary", async () => {
    const shared = await createLlamaEngine(
      buildTinyEngineOptions(inject("models"), { slotsPerAdapter: 1, summarySlotsPerAdapter: 0 }),
    );
    try {
      const { first, answerQueueMs } = await answerDuringSummary(shared);
      expect(first).toBe("summary");
      expect(answerQueueMs).toBeGreaterThan(0);
    } finally {
      await shared.close();
    }
  });

  it("leaves the answer slot's conversation warm, and reuses the summary slot's own KV on the next turn", async () => {
    await collectAnswer(t.client, answerInput("warm", "chat", VIEW));
    const warm = () => t.engine.snapshot().find((s) => s.adapter === "chat")?.warmConversations;
    expect(warm()).toEqual(["warm"]);

    const summarize = (view: string, i: number) =>
      requestGenerate(
        t.client,
        summaryRequest("other", "chat", view, {
          requestId: `summary-slots-${i}`,
          sampling: { maxTokens: 16, temperature: 0 },
        }),
      );
    const turnOne = `${VIEW} a cache of keys and values.`;
    const first = await summarize(turnOne + SUMMARY_CUE, 1);
    // Over the node's hop: the summary of "other" took a summary slot, not "warm"'s answer slot.
    expect(warm()).toEqual(["warm"]);

    const second = await summarize(
      `${turnOne}\nuser: and why reuse it?\nassistant: it saves work.${SUMMARY_CUE}`,
      2,
    );
    expect(second.usage.cachedPromptTokens).toBeGreaterThanOrEqual(
      first.usage.promptTokens - SUMMARY_CUE.length,
    );
    expect(warm()).toEqual(["warm"]);
  });
});
