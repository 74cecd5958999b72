import { z } from "@hono/zod-openapi";
import { metadataSchema } from "./metadata-schema.ts";
import { modelNameSchema } from "./resolve-model.ts";
import { describeMessageTooLong, measureUtf8Bytes, type RequestLimits } from "./request-limits.ts";
import { harmlessOpenAiFields, maxTokensSchema, temperatureSchema, topPSchema } from "./sampling-fields.ts";

const inputTextPartSchema = z.strictObject({ type: z.literal("input_text"), text: z.string() });
/** An earlier answer as clients send it back (the `output` of a previous response). */
const outputTextPartSchema = z.strictObject({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(z.unknown()).optional(),
  logprobs: z.array(z.unknown()).optional(),
});

const inputMessageSchema = z
  .strictObject({
    type: z.literal("message").optional(),
    role: z.enum(["user", "system", "developer"]),
    content: z.union([z.string(), z.array(inputTextPartSchema).min(1)]),
  })
  .openapi("ResponseInputMessage");

const outputMessageSchema = z
  .strictObject({
    type: z.literal("message").optional(),
    id: z.string().max(128).optional(),
    status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
    role: z.literal("assistant"),
    content: z.union([z.string(), z.array(outputTextPartSchema).min(1)]),
  })
  .openapi("ResponseInputAssistantMessage");

/** The result of a tool call; no call can exist yet (function calling is not here), so any `call_id` is unknown. */
const functionCallOutputSchema = z.strictObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1).max(128),
  output: z.union([z.string(), z.array(z.unknown())]),
  id: z.string().max(128).optional(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

/** An item already in the conversation (checked against its timeline when the turn starts). */
const itemReferenceSchema = z.strictObject({
  type: z.literal("item_reference"),
  id: z.string().min(1).max(128),
});

const inputItemSchema = z.union([
  inputMessageSchema,
  outputMessageSchema,
  functionCallOutputSchema,
  itemReferenceSchema,
]);

const inputSchema = z.union([z.string(), z.array(inputItemSchema).min(1)]);
export type ResponseInput = z.infer<typeof inputSchema>;
type InputItem = z.infer<typeof inputItemSchema>;

function readContentText(content: string | ReadonlyArray<{ text: string }>): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

/** The turn's input, sorted for the timeline: the last user message is the turn; the rest comes before it. */
export interface ResponseInputParts {
  text: string;
  /** `instructions`, then system/developer items, joined with blank lines; undefined when none. */
  instructions?: string;
  /** Earlier user and assistant messages of the array, in order. */
  context: Array<{ role: "user" | "assistant"; text: string }>;
  itemReferences: string[];
}

export function readResponseInput(input: ResponseInput, instructions?: string): ResponseInputParts {
  if (typeof input === "string") {
    return { text: input, context: [], itemReferences: [], ...(instructions ? { instructions } : {}) };
  }
  const system = instructions ? [instructions] : [];
  const context: ResponseInputParts["context"] = [];
  const itemReferences: string[] = [];
  const last = input.at(-1);
  for (const item of input.slice(0, -1)) {
    if (item.type === "item_reference") itemReferences.push(item.id);
    else if (item.type === "function_call_output") continue;
    else if (item.role === "system" || item.role === "developer") system.push(readContentText(item.content));
    else context.push({ role: item.role, text: readContentText(item.content) });
  }
  const text = last && isMessage(last) ? readContentText(last.content) : "";
  return {
    text,
    context,
    itemReferences,
    ...(system.length > 0 ? { instructions: system.join("\n\n") } : {}),
  };
}

/** One turn's user text (the last message); parts are joined with newlines, as vLLM joins text parts. */
export function readResponseInputText(input: ResponseInput): string {
  return readResponseInput(input).text;
}

function isMessage(item: InputItem): item is Extract<InputItem, { role: string }> {
  return "role" in item;
}

/**
 * `POST /v1/responses`: one turn, of a named conversation, of the conversation `previous_response_id` ends
 * (forked when it is not that conversation's latest), or of a new implicit one; `store: false` stores nothing.
 * `tools`, `tool_choice` and `text` accept only what means "plain text, no tools" until function calling and
 * structured outputs land.
 */
export function createResponseBodySchema(limits: RequestLimits) {
  return z
    .strictObject({
      conversation: z
        .union([z.string().min(1).max(128), z.strictObject({ id: z.string().min(1).max(128) })])
        .optional(),
      previous_response_id: z.string().min(1).max(128).optional(),
      input: inputSchema,
      instructions: z.string().optional(),
      stream: z.boolean().optional(),
      metadata: metadataSchema.optional(),
      model: modelNameSchema.optional(),
      temperature: temperatureSchema.optional(),
      top_p: topPSchema.optional(),
      max_output_tokens: maxTokensSchema.optional(),
      store: z.boolean().optional(),
      background: z.boolean().optional(),
      tools: z.array(z.unknown()).max(0, { message: "function calling is not supported yet" }).optional(),
      tool_choice: z
        .enum(["none", "auto"], { error: "function calling is not supported yet: only none or auto" })
        .optional(),
      text: z
        .strictObject({
          format: z
            .strictObject({ type: z.literal("text", { error: "structured outputs are not supported yet" }) })
            .optional(),
        })
        .optional(),
      truncation: z.literal("disabled", { error: "the conversation is never truncated" }).optional(),
      ...harmlessOpenAiFields,
    })
    .superRefine((body, ctx) => {
      const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: "custom", path, message });
      if (body.conversation !== undefined && body.previous_response_id !== undefined)
        issue(["previous_response_id"], "set conversation or previous_response_id, not both");
      if (body.store === false && body.conversation !== undefined)
        issue(["store"], "a conversation's turns are always stored");
      if (body.store === false && body.previous_response_id !== undefined)
        issue(["store"], "store: false cannot continue a stored response");
      if (body.store === false && body.background === true)
        issue(["background"], "background responses must be stored");
      if (Array.isArray(body.input)) {
        body.input.forEach((item, index) => {
          if (item.type === "function_call_output")
            issue(
              ["input", index, "call_id"],
              `No tool call found for function call output with call_id ${item.call_id}.`,
            );
          if (item.type === "item_reference" && body.store === false)
            issue(["input", index], "store: false has no stored items to reference");
        });
        const lastIndex = body.input.length - 1;
        const last = body.input[lastIndex];
        if (last && (!isMessage(last) || last.role !== "user"))
          issue(
            ["input", lastIndex, ...(isMessage(last) ? ["role"] : [])],
            "the last input item must be a user message",
          );
      }
      const parts = readResponseInput(body.input, body.instructions);
      if (parts.text.trim() === "") issue(["input"], "input is empty");
      else {
        const bytes =
          measureUtf8Bytes(parts.text) +
          measureUtf8Bytes(parts.instructions ?? "") +
          parts.context.reduce((sum, m) => sum + measureUtf8Bytes(m.text), 0);
        if (bytes > limits.maxMessageBytes)
          issue(
            [
              body.instructions && measureUtf8Bytes(parts.text) <= limits.maxMessageBytes
                ? "instructions"
                : "input",
            ],
            describeMessageTooLong(limits),
          );
      }
    })
    .openapi("CreateResponseRequest", {
      example: { input: "write a python function that reverses a string", store: true },
    });
}
export type CreateResponseBody = z.infer<ReturnType<typeof createResponseBodySchema>>;

export function readConversationId(conversation: CreateResponseBody["conversation"]): string | undefined {
  return typeof conversation === "string" ? conversation : conversation?.id;
}
