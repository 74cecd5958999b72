import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

let mesh: TestMesh;
let client: OpenAI;

beforeAll(async () => {
  mesh = await startTestMesh();
  // The official client, unchanged: only its base URL and key point at molmesh.
  client = new OpenAI({ apiKey: TEST_API_KEY, baseURL: `${mesh.edge.url}/v1`, maxRetries: 0 });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

type Mol = {
  label: string;
  adapter: string;
  source: string;
  revision?: string;
  harnessHash: string;
  timings: Record<string, number | undefined>;
  usage: Record<string, { promptTokens: number; cachedPromptTokens: number } | undefined>;
  summary: { status: string; text?: string };
};
const molOf = (value: unknown): Mol => (value as { mol: Mol }).mol;
const SHORT = { max_output_tokens: 16 } as const;

describe("the edge over a real GPU node", () => {
  it("answers GET /healthz with 200 and lists the models", async () => {
    const health = await fetch(`${mesh.edge.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get("x-request-id")).toMatch(/^req_/);
    // Public: whether the edge serves, never which nodes or how loaded (edge-observability.test.ts: details).
    expect(await health.json()).toEqual({ status: "ok" });
    const openapi = (await (await fetch(`${mesh.edge.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        "/v1/responses",
        "/v1/chat/completions",
        "/v1/conversations/{id}/items",
        "/healthz",
      ]),
    );
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["mol", "mol:chat", "mol:agent", "mol:coding", "mol:genui"]);
  });

  it("runs a multi-turn conversation through the Responses API, streamed and not, with the MoL facts", async () => {
    const conversation = await client.conversations.create({ metadata: { topic: "tests" } });
    expect(conversation.id).toMatch(/^conv_/);
    const first = await client.responses.create({
      conversation: conversation.id,
      input: "write a python function",
      ...SHORT,
    });
    expect(first.object).toBe("response");
    expect(first.output_text.length).toBeGreaterThan(0);
    expect(first.usage?.input_tokens).toBeGreaterThan(0);
    const mol = molOf(first);
    expect(["chat", "agent", "coding", "genui"]).toContain(mol.label);
    expect(mol).toMatchObject({ source: "router", adapter: mol.label });
    expect(mol.revision).toMatch(/^sha256:/);
    expect(mol.harnessHash).toMatch(/^sha256:/);
    expect(mol.timings.routeMs).toBeGreaterThanOrEqual(0);
    expect(mol.timings.answerTotalMs).toBeGreaterThanOrEqual(mol.timings.answerFirstTokenMs ?? 0);

    const stream = await client.responses.create({
      conversation: conversation.id,
      input: "now explain it",
      stream: true,
      ...SHORT,
    });
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    let lastSequence = -1;
    for await (const event of stream) {
      expect(event.sequence_number).toBeGreaterThan(lastSequence);
      lastSequence = event.sequence_number;
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed" || event.type === "response.incomplete")
        completed = event.response;
    }
    const output = completed?.output[0];
    expect(
      output?.type === "message" && output.content[0]?.type === "output_text" ? output.content[0].text : "",
    ).toBe(text);
    expect(completed?.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);

    // Each turn's summary lands in the timeline, readable from the items. It runs on a KV slot of its own, off
    // the next turn's path, so turn 1's may still be decoding when this back-to-back turn 2 has ended.
    const items = await client.conversations.items.list(conversation.id, { order: "asc" });
    expect(items.data).toHaveLength(4);
    expect(items.data.map((i) => (i as { role: string }).role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    // Turn 1's answer is the second item in ascending order. Summaries run after the answer, off the critical
    // path, so they land a little later: wait for them as long as a hop may take on a busy box, not poll's 1 s.
    const summaryWait = { timeout: 30_000, interval: 200 };
    await expect
      .poll(
        async () =>
          molOf((await client.conversations.items.list(conversation.id, { order: "asc", limit: 2 })).data[1])
            .summary.status,
        summaryWait,
      )
      .toBe("ready");
    await expect
      .poll(
        async () =>
          molOf((await client.conversations.items.list(conversation.id, { order: "desc", limit: 1 })).data[0])
            .summary.status,
        summaryWait,
      )
      .toBe("ready");
  });

  it("reuses each specialist's KV across turns (forced specialist, growing view)", async () => {
    const conversation = await client.conversations.create({});
    let previousPrompt = 0;
    for (let turn = 0; turn < 4; turn++) {
      const response = await client.responses.create({
        conversation: conversation.id,
        input: `question ${turn}: tell me more`,
        model: "mol:coding",
        ...SHORT,
      });
      const usage = molOf(response).usage.answer;
      expect(molOf(response)).toMatchObject({ label: "coding", source: "forced" });
      if (turn > 0) expect(usage?.cachedPromptTokens).toBeGreaterThanOrEqual(previousPrompt - 8);
      previousPrompt = usage?.promptTokens ?? 0;
    }
  });

  it("serves stateless chat completions, streamed with usage and not", async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "hello" },
    ];
    const plain = await client.chat.completions.create({
      model: "mol:genui",
      messages,
      max_completion_tokens: 12,
    });
    expect(plain.object).toBe("chat.completion");
    expect(plain.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(plain.usage?.prompt_tokens).toBeGreaterThan(0);
    const routed = await client.chat.completions.create({ model: "mol", messages, max_completion_tokens: 4 });
    expect(molOf(routed)).toMatchObject({ source: "router" });

    // Issue 14: independent requests never share a KV slot; a client's cache key (or `user`) asks for one.
    const first = await client.chat.completions.create({
      model: "mol:genui",
      messages,
      max_completion_tokens: 12,
      prompt_cache_key: "edge-turns-chat",
    });
    const stream = await client.chat.completions.create({
      model: "mol:genui",
      prompt_cache_key: "edge-turns-chat",
      messages: [
        ...messages,
        { role: "assistant", content: first.choices[0]?.message.content ?? "" },
        { role: "user", content: "again" },
      ],
      max_completion_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("length");
    // Same cache key → same KV slot on the node: the grown history reuses its prefix.
    expect(usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it("keeps a conversation going far past the tiny model's context", async () => {
    const conversation = await client.conversations.create({});
    // Hex digits tokenise to about a token per byte or two on the tiny vocabulary: 40 turns hold ~10k tokens.
    const filler = Array.from({ length: 24 }, (_, i) => (i * 2654435761).toString(16).slice(-8)).join(" ");
    for (let turn = 0; turn < 40; turn++) {
      const response = await client.responses.create({
        conversation: conversation.id,
        input: `${turn}: ${filler}`,
        model: "mol:chat",
        max_output_tokens: 8,
      });
      expect(response.status, `turn ${turn}`).not.toBe("failed");
    }
    const items = await client.conversations.items.list(conversation.id, { limit: 100 });
    expect(items.data.length).toBe(80);
    expect(items.has_more).toBe(false);
  }, 180_000);

  it("accepts a 48 KB pasted stack trace whole: items keep it, the turn completes (views clip it)", async () => {
    const frames = Array.from(
      { length: 900 },
      (_, i) => `  File "app/module_${i}.py", line ${i}, in handler_${i}`,
    );
    const trace = `Traceback (most recent call last):\n${frames.join("\n")}\nValueError: the very end`;
    expect(new TextEncoder().encode(trace).length).toBeGreaterThan(45_000);
    const conversation = await client.conversations.create({});
    const response = await client.responses.create({
      conversation: conversation.id,
      input: trace,
      model: "mol:coding",
      ...SHORT,
    });
    expect(response.status).not.toBe("failed");
    const items = await client.conversations.items.list(conversation.id, { limit: 10, order: "asc" });
    const user = items.data.find((item) => item.type === "message" && item.role === "user");
    const text =
      user?.type === "message" ? user.content.map((part) => ("text" in part ? part.text : "")).join("") : "";
    expect(text).toBe(trace);
    // Chat completions: long system and assistant messages follow the same rule (accepted, clipped in views).
    const completion = await client.chat.completions.create({
      model: "mol:chat",
      max_completion_tokens: 4,
      messages: [
        { role: "system", content: trace },
        { role: "user", content: "what failed?" },
        { role: "assistant", content: trace },
        { role: "user", content: trace },
      ],
    });
    expect(completion.choices[0]?.finish_reason).toMatch(/stop|length/);
  }, 60_000);
});
