import { z } from "@hono/zod-openapi";
import { metadataSchema } from "./metadata-schema.ts";
import { modelNameSchema } from "./resolve-model.ts";
import { describeMessageTooLong, measureUtf8Bytes, type RequestLimits } from "./request-limits.ts";
import { harmlessOpenAiFields, maxTokensSchema, temperatureSchema, topPSchema } from "./sampling-fields.ts";
import {
  checkOutputRequest,
  fromResponseChoice,
  responseTextFormatSchema,
  responseToolChoiceSchema,
  responseToolSchema,
  toolListSchema,
} from "./tool-fields.ts";
import { renderToolCallText, renderToolResultText } from "../../conversation/tool-turn-text.ts";
import type { ContextMessage, ToolResult } from "../../db/timeline-event.ts";

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
    // A conversation's items carry these (`GET /v1/conversations/{id}/items`); fed back, they are ignored.
    id: z.string().max(128).optional(),
    status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
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
    /** A conversation item's turn facts, as the items list shows them; ignored. */
    mol: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("ResponseInputAssistantMessage");

/** A call the model made, as clients send it back (an earlier response's `function_call` output item). */
const functionCallSchema = z.strictObject({
  type: z.literal("function_call"),
  id: z.string().max(128).optional(),
  call_id: z.string().min(1).max(128),
  name: z.string().min(1).max(64),
  arguments: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

/**
 * The result of a tool call. Its `call_id` must name a `function_call` of this input, or one an earlier turn
 * of the conversation (or chain) made; the conversation object checks the latter when the turn starts.
 */
const functionCallOutputSchema = z.strictObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1).max(128),
  output: z.union([z.string(), z.array(inputTextPartSchema)]),
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
  functionCallSchema,
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
  /** The last user message, or (when the input ends in tool results) those results as the turn's text. */
  text: string;
  /** `instructions`, then system/developer items, joined with blank lines; undefined when none. */
  instructions?: string;
  /** Earlier user and assistant messages of the array, in order (calls and results as their view text). */
  context: ContextMessage[];
  /** The `function_call_output` items the input ends with, when the turn is those (`text` is their lines). */
  toolResults: ToolResult[];
  itemReferences: string[];
  /**
   * The `call_id` of each `function_call_output` no `function_call` of this input made, with its index: an
   * earlier turn of the conversation must have made it.
   */
  outsideCallIds: Array<{ callId: string; index: number }>;
}

function readOutputText(output: string | ReadonlyArray<{ text: string }>): string {
  return typeof output === "string" ? output : output.map((part) => part.text).join("\n");
}

export function readResponseInput(input: ResponseInput, instructions?: string): ResponseInputParts {
  if (typeof input === "string") {
    return {
      text: input,
      context: [],
      toolResults: [],
      itemReferences: [],
      outsideCallIds: [],
      ...(instructions ? { instructions } : {}),
    };
  }
  const system = instructions ? [instructions] : [];
  const context: ResponseInputParts["context"] = [];
  const itemReferences: string[] = [];
  const outsideCallIds: ResponseInputParts["outsideCallIds"] = [];
  const calls = new Map<string, string>();
  // The turn is the last user message, or the run of tool results the input ends with.
  let turnStart = input.length - 1;
  if (input.at(-1)?.type === "function_call_output")
    while (turnStart > 0 && input[turnStart - 1]?.type === "function_call_output") turnStart -= 1;
  const results: string[] = [];
  const toolResults: ToolResult[] = [];
  input.forEach((item, index) => {
    if (item.type === "item_reference") itemReferences.push(item.id);
    else if (item.type === "function_call") {
      calls.set(item.call_id, item.name);
      const toolCall = { id: item.call_id, name: item.name, arguments: item.arguments };
      context.push({ role: "assistant", text: renderToolCallText([item]), toolCall });
    } else if (item.type === "function_call_output") {
      if (!calls.has(item.call_id)) outsideCallIds.push({ callId: item.call_id, index });
      const toolResult = { callId: item.call_id, output: readOutputText(item.output) };
      const line = renderToolResultText(item.call_id, calls.get(item.call_id), toolResult.output);
      if (index >= turnStart) {
        results.push(line);
        toolResults.push(toolResult);
      } else context.push({ role: "user", text: line, toolResult });
    } else if (index === input.length - 1) return;
    else if (item.role === "system" || item.role === "developer") system.push(readContentText(item.content));
    else context.push({ role: item.role, text: readContentText(item.content) });
  });
  const last = input.at(-1);
  const text =
    results.length > 0 ? results.join("\n") : last && isMessage(last) ? readContentText(last.content) : "";
  return {
    text,
    context,
    toolResults,
    itemReferences,
    outsideCallIds,
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
 * `tools`, `tool_choice`, `parallel_tool_calls` and `text.format` follow OpenAI (see tool-fields.ts).
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
      tools: toolListSchema(responseToolSchema).optional(),
      tool_choice: responseToolChoiceSchema.optional(),
      text: z.strictObject({ format: responseTextFormatSchema.optional() }).optional(),
      truncation: z.literal("disabled", { error: "the conversation is never truncated" }).optional(),
      // The Agents SDK always sends `include: []`; encrypted reasoning is a no-op (no output has reasoning items).
      include: z
        .array(
          z.literal("reasoning.encrypted_content", {
            error: "only reasoning.encrypted_content can be included (no logprobs, no hosted tools)",
          }),
        )
        .optional(),
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
      checkOutputRequest(
        {
          tools: body.tools ?? [],
          choice: fromResponseChoice(body.tool_choice),
          format: body.text?.format,
        },
        {
          tools: "tools",
          choice: ["tool_choice"],
          format: ["text", "format"],
          toolName: (i) => ["tools", i, "name"],
        },
        issue,
      );
      const parts = readResponseInput(body.input, body.instructions);
      if (Array.isArray(body.input)) {
        body.input.forEach((item, index) => {
          if (item.type === "item_reference" && body.store === false)
            issue(["input", index], "store: false has no stored items to reference");
        });
        // With nothing to continue, a result for a call this input did not make can only be wrong.
        if (body.conversation === undefined && body.previous_response_id === undefined)
          for (const { callId, index } of parts.outsideCallIds)
            issue(["input", index, "call_id"], describeUnknownCall(callId));
        const lastIndex = body.input.length - 1;
        const last = body.input[lastIndex];
        if (last && last.type !== "function_call_output" && (!isMessage(last) || last.role !== "user"))
          issue(
            ["input", lastIndex, ...(isMessage(last) ? ["role"] : [])],
            "the last input item must be a user message or a function_call_output",
          );
      }
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
/** OpenAI's wording for a `function_call_output` whose call is unknown. */
export function describeUnknownCall(callId: string): string {
  return `No tool call found for function call output with call_id ${callId}.`;
}

export type CreateResponseBody = z.infer<ReturnType<typeof createResponseBodySchema>>;

export function readConversationId(conversation: CreateResponseBody["conversation"]): string | undefined {
  return typeof conversation === "string" ? conversation : conversation?.id;
}
