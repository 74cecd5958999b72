import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_API_KEY, startTestMesh, type TestMesh } from "../harness/start-test-mesh.ts";

/**
 * A specialist's harness `output` and `tools` through the real mesh (nats-server, llama.cpp on the tiny random model,
 * the edge in workerd): `chat` decodes under a grammar unless the request asks for a format, and `coding` may not call
 * tools. The weights are random, so only the constraint decides the output's shape.
 */
let mesh: TestMesh;
let client: OpenAI;

const VERDICT = 'root ::= "yes" | "no"';

beforeAll(async () => {
  mesh = await startTestMesh({
    edgeVars: {
      MOL_HARNESS: JSON.stringify({
        specialists: {
          chat: { output: { format: "grammar", grammar: VERDICT } },
          coding: { tools: { mode: "none" } },
        },
      }),
    },
  });
  client = new OpenAI({ apiKey: TEST_API_KEY, baseURL: `${mesh.edge.url}/v1`, maxRetries: 0 });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed before assigning it
  await mesh?.stop();
});

const SCHEMA = {
  type: "object",
  properties: { answer: { enum: ["maybe"] } },
  required: ["answer"],
  additionalProperties: false,
};

describe("a specialist's output and tool policy", () => {
  it("decodes under the harness grammar when the request sets no format, and under the request's when it does", async () => {
    const plain = await client.chat.completions.create({
      model: "mol:chat",
      messages: [{ role: "user", content: "yes or no?" }],
      max_completion_tokens: 8,
    });
    expect(["yes", "no"]).toContain(plain.choices[0]?.message.content);

    const formatted = await client.chat.completions.create({
      model: "mol:chat",
      messages: [{ role: "user", content: "as JSON" }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "verdict", schema: SCHEMA, strict: true },
      },
      max_completion_tokens: 32,
    });
    expect(JSON.parse(formatted.choices[0]?.message.content ?? "")).toEqual({ answer: "maybe" });
  });

  it("answers in text under tools `none`, though the request requires a call", async () => {
    const completion = await client.chat.completions.create({
      model: "mol:coding",
      messages: [{ role: "user", content: "weather?" }],
      tools: [
        {
          type: "function",
          function: { name: "get_weather", parameters: { type: "object", properties: {} }, strict: true },
        },
      ],
      tool_choice: "required",
      max_completion_tokens: 8,
    });
    const message = completion.choices[0]?.message;
    expect(message?.tool_calls ?? []).toEqual([]);
    expect(typeof message?.content).toBe("string");
  });
});
