import { z } from "@hono/zod-openapi";
import { metadataSchema } from "./metadata-schema.ts";
import { modelNameSchema } from "./resolve-model.ts";
import { describeMessageTooLong, measureUtf8Bytes, type RequestLimits } from "./request-limits.ts";
import { harmlessOpenAiFields, maxTokensSchema, temperatureSchema, topPSchema } from "./sampling-fields.ts";

const inputTextPartSchema = z.strictObject({ type: z.literal("input_text"), text: z.string() });

const inputMessageSchema = z
  .strictObject({
    type: z.literal("message").optional(),
    role: z.literal("user", { error: "only user messages are accepted; the conversation holds the history" }),
    content: z.union([z.string(), z.array(inputTextPartSchema).min(1)]),
  })
  .openapi("ResponseInputMessage");

const inputSchema = z.union([
  z.string(),
  z.array(inputMessageSchema).length(1, { message: "send exactly one user message per turn" }),
]);
export type ResponseInput = z.infer<typeof inputSchema>;

/** One turn's user text; parts are joined with newlines, as vLLM joins text parts. */
export function readResponseInputText(input: ResponseInput): string {
  if (typeof input === "string") return input;
  return input
    .map(({ content }) =>
      typeof content === "string" ? content : content.map((part) => part.text).join("\n"),
    )
    .join("\n");
}

/** `POST /v1/responses`: one user text appended to a server-side conversation. */
export function createResponseBodySchema(limits: RequestLimits) {
  return z
    .strictObject({
      conversation: z.union([z.string().min(1).max(128), z.strictObject({ id: z.string().min(1).max(128) })]),
      input: inputSchema,
      stream: z.boolean().optional(),
      metadata: metadataSchema.optional(),
      model: modelNameSchema.optional(),
      temperature: temperatureSchema.optional(),
      top_p: topPSchema.optional(),
      max_output_tokens: maxTokensSchema.optional(),
      store: z.literal(true, { error: "turns are always stored in their conversation" }).optional(),
      background: z.literal(false, { error: "background responses are not supported" }).optional(),
      truncation: z.literal("disabled", { error: "the conversation is never truncated" }).optional(),
      ...harmlessOpenAiFields,
    })
    .superRefine((body, ctx) => {
      const text = readResponseInputText(body.input);
      if (text.trim() === "") ctx.addIssue({ code: "custom", path: ["input"], message: "input is empty" });
      else if (measureUtf8Bytes(text) > limits.maxMessageBytes) {
        ctx.addIssue({ code: "custom", path: ["input"], message: describeMessageTooLong(limits) });
      }
    })
    .openapi("CreateResponseRequest", {
      example: { conversation: "conv_01J9Z3", input: "write a python function that reverses a string" },
    });
}
export type CreateResponseBody = z.infer<ReturnType<typeof createResponseBodySchema>>;

export function readConversationId(conversation: CreateResponseBody["conversation"]): string {
  return typeof conversation === "string" ? conversation : conversation.id;
}
