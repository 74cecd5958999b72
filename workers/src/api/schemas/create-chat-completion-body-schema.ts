import { z } from "@hono/zod-openapi";
import { metadataSchema } from "./metadata-schema.ts";
import { modelNameSchema } from "./resolve-model.ts";
import { renderToolCallText, renderToolResultText } from "../../conversation/tool-turn-text.ts";
import { describeMessageTooLong, measureUtf8Bytes, type RequestLimits } from "./request-limits.ts";
import {
  harmlessOpenAiFields,
  maxTokensSchema,
  seedSchema,
  stopSchema,
  temperatureSchema,
  topPSchema,
} from "./sampling-fields.ts";
import {
  chatResponseFormatSchema,
  chatToolChoiceSchema,
  chatToolSchema,
  checkOutputRequest,
  fromChatFormat,
  fromChatTools,
  toolListSchema,
} from "./tool-fields.ts";

const textPartSchema = z.strictObject({ type: z.literal("text"), text: z.string() });
const contentSchema = z.union([z.string(), z.array(textPartSchema).min(1)]);
type ChatContent = z.infer<typeof contentSchema>;

/** Text parts are joined with newlines, as vLLM joins them. */
export function readChatContentText(content: ChatContent): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

const functionSchema = z.strictObject({ name: z.string().min(1).max(64), arguments: z.string() });

const toolCallSchema = z.strictObject({
  id: z.string().min(1).max(128),
  type: z.literal("function"),
  function: functionSchema,
  /** The stream's call index: a client that assembles the message from deltas may keep it. */
  index: z.int().nonnegative().optional(),
});

const nameField = z.string().max(64).optional();
const instructionMessage = <R extends "system" | "developer" | "user">(role: R) =>
  z.strictObject({ role: z.literal(role), content: contentSchema, name: nameField });

/**
 * One message, in OpenAI's shapes by role. `developer` is what newer OpenAI clients send instead of `system`. An
 * assistant message may carry `tool_calls` (its content then may be null or absent); a `tool` message answers
 * one of them by `tool_call_id`, and like every other role it needs `content`.
 */
const messageSchema = z
  .discriminatedUnion("role", [
    instructionMessage("system"),
    instructionMessage("developer"),
    instructionMessage("user"),
    z.strictObject({
      role: z.literal("assistant"),
      content: contentSchema.nullable().optional(),
      name: nameField,
      tool_calls: z.array(toolCallSchema).min(1).optional(),
      refusal: z.string().nullable().optional(),
      // What the API returns on a message, accepted back as clients append it to the next request (ignored).
      annotations: z.array(z.unknown()).optional(),
      audio: z
        .strictObject({ id: z.string().max(128) })
        .nullable()
        .optional(),
      /** The deprecated single call, only as the client types carry it (null): calls are `tool_calls`. */
      function_call: z.null().optional(),
      /** What the official Node client's stream helper adds to the message it assembles (`parsed: null`). */
      parsed: z.unknown().optional(),
    }),
    z.strictObject({
      role: z.literal("tool"),
      content: contentSchema,
      tool_call_id: z.string().min(1).max(128),
    }),
  ])
  .openapi("ChatMessage");
type ChatMessageBody = z.infer<typeof messageSchema>;

/** A message's text as the prompt shows it: calls as the model writes them, a tool result as a user line. */
export function readChatMessageText(
  message: ChatMessageBody,
  callNames: ReadonlyMap<string, string>,
): string {
  const content = message.content == null ? "" : readChatContentText(message.content);
  if (message.role === "tool")
    return renderToolResultText(message.tool_call_id, callNames.get(message.tool_call_id), content);
  if (message.role === "assistant" && message.tool_calls) {
    const calls = renderToolCallText(message.tool_calls.map((call) => call.function));
    return content === "" ? calls : `${content}\n${calls}`;
  }
  return content;
}

/** Each earlier call's function name, by call id. */
export function readChatCallNames(messages: readonly ChatMessageBody[]): Map<string, string> {
  return new Map(
    messages.flatMap((m) =>
      m.role === "assistant"
        ? (m.tool_calls ?? []).map((call) => [call.id, call.function.name] as const)
        : [],
    ),
  );
}

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
      tools: toolListSchema(chatToolSchema).optional(),
      tool_choice: chatToolChoiceSchema.optional(),
      response_format: chatResponseFormatSchema.optional(),
      ...harmlessOpenAiFields,
    })
    .superRefine((body, ctx) => {
      const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: "custom", path, message });
      checkOutputRequest(
        { ...fromChatTools(body.tools, body.tool_choice), format: fromChatFormat(body.response_format) },
        {
          tools: "tools",
          choice: ["tool_choice"],
          format: ["response_format"],
          toolName: (i) => ["tools", i, "function", "name"],
        },
        issue,
      );
      const calls = new Set<string>();
      body.messages.forEach((message, index) => {
        if (message.role === "assistant") for (const call of message.tool_calls ?? []) calls.add(call.id);
        // OpenAI's rule: a tool message answers a call an earlier assistant message made.
        if (message.role === "tool" && !calls.has(message.tool_call_id))
          issue(
            ["messages", index, "tool_call_id"],
            "messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
          );
      });
      body.messages.forEach((message, index) => {
        if (message.content == null) return;
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
      if (last?.role === "tool") {
        // The turn answers the tool results.
      } else if (last?.role !== "user") {
        ctx.addIssue({
          code: "custom",
          path: ["messages", lastIndex, "role"],
          message: "the last message must be from the user or a tool",
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
