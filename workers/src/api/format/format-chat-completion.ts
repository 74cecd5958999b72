import type { ToolCall } from "../../../../schema/wire/v2/index.ts";
import type { TurnMol, TurnRecord } from "../../conversation/turn-record.ts";
import { formatMol, readModelName } from "./format-mol.ts";
import { sumCriticalPathUsage } from "./sum-critical-path-usage.ts";

export interface ChatUsageObject {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface ChatCompletionObject {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  /** The harness hash: it changes exactly when the prompts, adapters or routing change. */
  system_fingerprint: string;
  choices: [
    {
      index: 0;
      message: {
        role: "assistant";
        /** Null when the answer is function calls, as OpenAI sends it. */
        content: string | null;
        refusal: null;
        annotations: never[];
        tool_calls?: ChatToolCallObject[];
      };
      finish_reason: "stop" | "length" | "tool_calls";
      logprobs: null;
    },
  ];
  usage: ChatUsageObject;
  mol: TurnMol;
}

export interface ChatToolCallObject {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export function formatChatToolCalls(calls: readonly ToolCall[]): ChatToolCallObject[] {
  return calls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
}

export interface ChatCompletionFormatOptions {
  /** Defaults to `chatcmpl-<turnId>`. */
  id?: string;
  model?: string;
  /** Unix seconds; defaults to the turn's. */
  created?: number;
}

export function toChatCompletionId(turnId: string): string {
  return `chatcmpl-${turnId}`;
}

/** Zeros when no hop reported usage (a turn that failed before routing): the field is required in this shape. */
export function formatChatUsage(mol: TurnMol): ChatUsageObject {
  const sum = sumCriticalPathUsage(mol.usage) ?? {
    inputTokens: 0,
    cachedTokens: 0,
    evaluatedTokens: 0,
    outputTokens: 0,
  };
  return {
    prompt_tokens: sum.inputTokens,
    completion_tokens: sum.outputTokens,
    total_tokens: sum.inputTokens + sum.outputTokens,
    prompt_tokens_details: { cached_tokens: sum.cachedTokens },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

export function formatChatCompletion(
  turn: TurnRecord,
  options: ChatCompletionFormatOptions = {},
): ChatCompletionObject {
  return {
    id: options.id ?? toChatCompletionId(turn.turnId),
    object: "chat.completion",
    created: options.created ?? turn.createdAt,
    model: options.model ?? readModelName(turn.mol),
    system_fingerprint: turn.mol.harnessHash,
    choices: [
      {
        index: 0,
        message: turn.toolCalls
          ? {
              role: "assistant",
              content: null,
              refusal: null,
              annotations: [],
              tool_calls: formatChatToolCalls(turn.toolCalls),
            }
          : { role: "assistant", content: turn.answerText, refusal: null, annotations: [] },
        finish_reason: turn.finishReason ?? "stop",
        logprobs: null,
      },
    ],
    usage: formatChatUsage(turn.mol),
    mol: formatMol(turn.mol),
  };
}
