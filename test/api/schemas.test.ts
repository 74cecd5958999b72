import { OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import type { ZodType } from "zod";
import { createValidationError } from "../../workers/src/api/errors/request-errors.ts";
import {
  conversationIdParamsSchema,
  createConversationBodySchema,
  listItemsQuerySchema,
} from "../../workers/src/api/schemas/conversation-schemas.ts";
import { createChatCompletionBodySchema } from "../../workers/src/api/schemas/create-chat-completion-body-schema.ts";
import {
  createResponseBodySchema,
  readConversationId,
  readResponseInputText,
} from "../../workers/src/api/schemas/create-response-body-schema.ts";
import { readChatSampling, readResponseSampling } from "../../workers/src/api/schemas/read-sampling.ts";
import { resolveModel } from "../../workers/src/api/schemas/resolve-model.ts";

const limits = { maxMessageBytes: 32 };
const responseBody = createResponseBodySchema(limits);
const chatBody = createChatCompletionBodySchema(limits);

/** The param a 400 would blame, or "ok". */
function blame(result: {
  success: boolean;
  error?: { issues: Parameters<typeof createValidationError>[0] };
}) {
  return result.success ? "ok" : createValidationError(result.error?.issues ?? []).param;
}

const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, "v"]));

describe("POST /v1/conversations body", () => {
  it.each([
    [{}, "ok"],
    [{ metadata: pairs(16) }, "ok"],
    [{ metadata: pairs(17) }, "metadata"],
    [{ metadata: { ["k".repeat(65)]: "v" } }, `metadata.${"k".repeat(65)}`],
    [{ metadata: { k: "v".repeat(513) } }, "metadata.k"],
    [{ metadata: { k: 1 } }, "metadata.k"],
    [{ items: [] }, "ok"],
    [{ items: [{ type: "message" }] }, "items"],
    [{ extra: true }, "extra"],
  ])("%j → %s", (body, param) => {
    expect(blame(createConversationBodySchema.safeParse(body))).toBe(param);
  });
});

describe("GET items query", () => {
  it("defaults and coerces", () => {
    expect(listItemsQuerySchema.parse({})).toEqual({ limit: 20, order: "desc" });
    expect(listItemsQuerySchema.parse({ limit: "100", order: "asc", after: "msg_1" })).toEqual({
      limit: 100,
      order: "asc",
      after: "msg_1",
    });
  });

  it.each([{ limit: "0" }, { limit: "101" }, { limit: "2.5" }, { order: "up" }, { after: "" }])(
    "rejects %j",
    (query) => {
      expect(listItemsQuerySchema.safeParse(query).success).toBe(false);
    },
  );
});

describe("POST /v1/responses body", () => {
  const base = { conversation: "conv_1", input: "hi" };

  it.each([
    [base, "ok"],
    [{ ...base, conversation: { id: "conv_1" } }, "ok"],
    [{ ...base, input: [{ role: "user", content: "hi" }] }, "ok"],
    [
      { ...base, input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "a" }] }] },
      "ok",
    ],
    [{ ...base, stream: true, metadata: { a: "b" }, model: "mol:coding", store: true, temperature: 0 }, "ok"],
    [{ ...base, user: "u1", prompt_cache_key: "k", service_tier: "auto", truncation: "disabled" }, "ok"],
    // Issue 14: no conversation is a new implicit one; arrays carry history; instructions are a timeline event.
    [{ input: "hi" }, "ok"],
    [{ input: "hi", previous_response_id: "resp_1", instructions: "be brief" }, "ok"],
    [{ input: "hi", store: false, instructions: "x" }, "ok"],
    [{ input: "hi", store: false, background: true }, "background"],
    [{ input: "hi", store: false, previous_response_id: "resp_1" }, "store"],
    [
      {
        input: [
          { role: "system", content: "s" },
          { role: "developer", content: [{ type: "input_text", text: "d" }] },
          {
            type: "message",
            role: "assistant",
            id: "msg_1",
            status: "completed",
            content: [{ type: "output_text", text: "a", annotations: [] }],
          },
          { type: "item_reference", id: "msg_1u" },
          { role: "user", content: "u" },
        ],
      },
      "ok",
    ],
    [
      {
        input: [
          { type: "function_call_output", call_id: "call_1", output: "{}" },
          { role: "user", content: "u" },
        ],
      },
      "input[0].call_id",
    ],
    [{ input: [{ type: "item_reference", id: "msg_1u" }] }, "input[0]"],
    [{ input: "hi", tools: [{ type: "function", name: "f" }] }, "ok"],
    [{ input: "hi", tools: [], tool_choice: "auto", text: { format: { type: "text" } } }, "ok"],
    [{ input: "hi", tool_choice: "required" }, "tool_choice"],
    [{ input: "hi", include: [] }, "ok"],
    [{ input: "hi", include: ["reasoning.encrypted_content"] }, "ok"],
    [{ input: "hi", include: ["message.output_text.logprobs"] }, "include[0]"],
    [{ input: "hi", text: { format: { type: "json_schema" } } }, "text.format.name"],
    [{ input: "hi", instructions: "x".repeat(31) }, "instructions"],
    [{ ...base, conversation: "" }, "conversation"],
    [{ ...base, input: "" }, "input"],
    [{ ...base, input: "  \n" }, "input"],
    [{ ...base, input: [] }, "input"],
    [{ ...base, input: [{ role: "assistant", content: "x" }] }, "input[0].role"],
    [
      {
        ...base,
        input: [
          { role: "user", content: "a" },
          { role: "user", content: "b" },
        ],
      },
      "ok",
    ],
    [
      { ...base, input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] },
      "input[0].content[0].type",
    ],
    [{ ...base, input: "x".repeat(33) }, "input"],
    [{ ...base, input: "é".repeat(17) }, "input"],
    [{ ...base, stream: "yes" }, "stream"],
    [{ ...base, store: false }, "store"],
    [{ ...base, instructions: 5 }, "instructions"],
    [{ ...base, previous_response_id: "resp_1" }, "previous_response_id"],
    [{ ...base, temperature: 3 }, "temperature"],
    [{ ...base, max_output_tokens: 0 }, "max_output_tokens"],
    [{ ...base, metadata: pairs(17) }, "metadata"],
  ])("%j → %s", (body, param) => {
    expect(blame(responseBody.safeParse(body))).toBe(param);
  });

  it("explains a refused role in words", () => {
    const result = responseBody.safeParse({ ...base, input: [{ role: "assistant", content: "x" }] });
    expect(createValidationError(result.error?.issues ?? []).message).toContain(
      "the last input item must be a user message",
    );
  });

  it("counts the limit in UTF-8 bytes, and lets exactly the limit through", () => {
    expect(responseBody.safeParse({ ...base, input: "x".repeat(32) }).success).toBe(true);
    expect(responseBody.safeParse({ ...base, input: "é".repeat(16) }).success).toBe(true);
  });

  it("joins text parts into one user text and reads the conversation id", () => {
    const body = responseBody.parse({
      conversation: { id: "conv_9" },
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "a" },
            { type: "input_text", text: "b" },
          ],
        },
      ],
      temperature: 0.2,
      max_output_tokens: 64,
    });
    expect(readResponseInputText(body.input)).toBe("a\nb");
    expect(readConversationId(body.conversation)).toBe("conv_9");
    expect(readResponseSampling(body)).toStrictEqual({ temperature: 0.2, maxTokens: 64 });
  });
});

describe("POST /v1/chat/completions body", () => {
  const base = { model: "mol", messages: [{ role: "user", content: "hi" }] };

  it.each([
    [base, "ok"],
    [
      {
        ...base,
        messages: [{ role: "system", content: "s" }, { role: "assistant", content: "a" }, ...base.messages],
      },
      "ok",
    ],
    [{ ...base, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }, "ok"],
    [{ ...base, stream: true, stream_options: { include_usage: true }, n: 1, seed: 7, stop: "x" }, "ok"],
    [{ ...base, max_completion_tokens: 10, user: "u", metadata: { a: "b" }, frequency_penalty: 0 }, "ok"],
    [{ messages: base.messages }, "model"],
    [{ ...base, messages: [] }, "messages"],
    [{ ...base, messages: [{ role: "assistant", content: "a" }] }, "messages[0].role"],
    // OpenAI's shape: a tool message needs its tool_call_id, and it must name a call an assistant message made.
    [{ ...base, messages: [{ role: "tool", content: "a" }] }, "messages[0].tool_call_id"],
    [
      { ...base, messages: [{ role: "tool", content: "a", tool_call_id: "call_1" }] },
      "messages[0].tool_call_id",
    ],
    [{ ...base, messages: [{ role: "tool", tool_call_id: "call_1" }] }, "messages[0].content"],
    [
      { ...base, messages: [{ role: "user", content: "u", tool_call_id: "call_1" }] },
      "messages[0].tool_call_id",
    ],
    [{ ...base, messages: [{ role: "user", content: "" }] }, "messages[0].content"],
    [{ ...base, messages: [{ role: "user", content: null }] }, "messages[0].content"],
    [{ ...base, messages: [{ role: "user", content: "x".repeat(33) }] }, "messages[0].content"],
    [
      { ...base, messages: [{ role: "system", content: "x".repeat(33) }, ...base.messages] },
      "messages[0].content",
    ],
    [{ ...base, n: 2 }, "n"],
    [{ ...base, stream_options: { include_usage: true } }, "stream_options"],
    [{ ...base, max_tokens: 5, max_completion_tokens: 5 }, "max_tokens"],
    [{ ...base, max_tokens: 100_000 }, "max_tokens"],
    [{ ...base, top_p: 0 }, "top_p"],
    [{ ...base, seed: -1 }, "seed"],
    [{ ...base, stop: ["a", ""] }, "stop[1]"],
    [{ ...base, presence_penalty: 1 }, "presence_penalty"],
    [{ ...base, tools: [] }, "ok"],
  ])("%j → %s", (body, param) => {
    expect(blame(chatBody.safeParse(body))).toBe(param);
  });

  it("reads the sampling the client set, and only that", () => {
    const body = chatBody.parse({ ...base, max_tokens: 9, stop: "END", top_p: 0.5 });
    expect(readChatSampling(body)).toStrictEqual({ maxTokens: 9, stop: ["END"], topP: 0.5 });
    expect(readChatSampling(chatBody.parse(base))).toStrictEqual({});
  });
});

describe("resolveModel", () => {
  const labels = ["chat", "coding"];
  it("routes `mol`, forces a served label and 404s the rest", () => {
    expect(resolveModel("mol", labels)).toEqual({ kind: "routed" });
    expect(resolveModel("mol:coding", labels)).toEqual({ kind: "forced", label: "coding" });
    for (const model of ["gpt-4o", "mol:", "mol:l0", "mol:coding:x", "MOL"]) {
      expect(() => resolveModel(model, labels)).toThrow(
        expect.objectContaining({ status: 404, code: "model_not_found" }),
      );
    }
  });
});

describe("OpenAPI", () => {
  it("renders every schema into one document", () => {
    const app = new OpenAPIHono();
    const ok = { 200: { description: "ok" } };
    const post = <T extends ZodType>(path: string, schema: T) =>
      createRoute({
        method: "post",
        path,
        request: { body: { content: { "application/json": { schema } } } },
        responses: ok,
      });
    app.openapi(post("/v1/conversations", createConversationBodySchema), (c) => c.json({}));
    app.openapi(post("/v1/responses", responseBody), (c) => c.json({}));
    app.openapi(post("/v1/chat/completions", chatBody), (c) => c.json({}));
    const params = { params: conversationIdParamsSchema, query: listItemsQuerySchema };
    const list = createRoute({
      method: "get",
      path: "/v1/conversations/{id}/items",
      request: params,
      responses: ok,
    });
    app.openapi(list, (c) => c.json({}));

    const doc = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "molmesh", version: "1" } });
    expect(Object.keys(doc.components?.schemas ?? {})).toEqual(
      expect.arrayContaining([
        "CreateConversationRequest",
        "CreateResponseRequest",
        "CreateChatCompletionRequest",
        "Metadata",
        "ChatMessage",
      ]),
    );
    expect(doc.paths?.["/v1/conversations/{id}/items"]?.get?.parameters).toHaveLength(4);
  });
});
