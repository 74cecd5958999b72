import { z } from "@hono/zod-openapi";
import { metadataSchema } from "./metadata-schema.ts";
import { modelNameSchema } from "./resolve-model.ts";
import { describeMessageTooLong, measureUtf8Bytes, type RequestLimits } from "./request-limits.ts";
import {
  harmlessOpenAiFields,
  maxTokensSchema,
  seedSchema,
  stopSchema,
  temperatureSchema,
  topPSchema,
} from "./sampling-fields.ts";

const textPartSchema = z.strictObject({ type: z.literal("text"), text: z.string() });
const contentSchema = z.union([z.string(), z.array(textPartSchema).min(1)]);
type ChatContent = z.infer<typeof contentSchema>;

/** Text parts are joined with newlines, as vLLM joins them. */
export function readChatContentText(content: ChatContent): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

const messageSchema = z
  .strictObject({
    // `developer` is what newer OpenAI clients send instead of `system`.
    role: z.enum(["system", "developer", "user", "assistant"]),
    content: contentSchema,
    name: z.string().max(64).optional(),
  })
  .openapi("ChatMessage");

/** `POST /v1/chat/completions` in OpenAI's shape; `n`, penalties and logprobs only at their no-op values. */
export function createChatCompletionBodySchema(limits: RequestLimits) {
  return z
    .strictObject({
      model: modelNameSchema,
      messages: z.array(messageSchema).min(1),
      stream: z.boolean().optional(),
      stream_options: z
        .strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
        .optional(),
      max_tokens: maxTokensSchema.optional(),
      max_completion_tokens: maxTokensSchema.optional(),
      temperature: temperatureSchema.optional(),
      top_p: topPSchema.optional(),
      seed: seedSchema.optional(),
      stop: stopSchema.optional(),
      n: z.literal(1, { error: "only n = 1 is supported" }).optional(),
      metadata: metadataSchema.optional(),
      store: z.boolean().optional(),
      logprobs: z.literal(false, { error: "logprobs are not supported" }).optional(),
      frequency_penalty: z.literal(0, { error: "frequency_penalty is not supported" }).optional(),
      presence_penalty: z.literal(0, { error: "presence_penalty is not supported" }).optional(),
      ...harmlessOpenAiFields,
    })
    .superRefine((body, ctx) => {
      body.messages.forEach((message, index) => {
        if (measureUtf8Bytes(readChatContentText(message.content)) > limits.maxMessageBytes) {
          ctx.addIssue({
            code: "custom",
            path: ["messages", index, "content"],
            message: describeMessageTooLong(limits),
          });
        }
      });
      const lastIndex = body.messages.length - 1;
      const last = body.messages[lastIndex];
      if (last?.role !== "user") {
        ctx.addIssue({
          code: "custom",
          path: ["messages", lastIndex, "role"],
          message: "the last message must be from the user",
        });
      } else if (readChatContentText(last.content).trim() === "") {
        ctx.addIssue({
          code: "custom",
          path: ["messages", lastIndex, "content"],
          message: "the user message is empty",
        });
      }
      if (body.stream_options !== undefined && body.stream !== true) {
        ctx.addIssue({
          code: "custom",
          path: ["stream_options"],
          message: "stream_options requires stream: true",
        });
      }
      if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["max_tokens"],
          message: "set max_tokens or max_completion_tokens, not both",
        });
      }
    })
    .openapi("CreateChatCompletionRequest", {
      example: { model: "mol", messages: [{ role: "user", content: "hello" }] },
    });
}
export type ChatCompletionBody = z.infer<ReturnType<typeof createChatCompletionBodySchema>>;
