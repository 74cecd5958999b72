import { createParser } from "eventsource-parser";
import { z } from "zod";
import { EngineFailureError, type FinishReason, type Usage } from "../../../../schema/wire/v2/index.ts";
import type { EngineGenerateResult } from "../engine.ts";
import {
  mapEngineError,
  mapHttpError,
  readErrorBody,
  throwIfAborted,
  toAbortError,
  type EngineHttpClient,
} from "./engine-http-client.ts";

/** A `/v1/completions` request body; each flavour fills in its own fields (see flavors.ts). */
export type CompletionBody = Record<string, unknown>;

const count = z.number().nonnegative();

/**
 * One `data:` payload of a streamed `/v1/completions` response, as vLLM and llama-server send it. Only the
 * fields molmesh reads are declared; the rest (id, created, logprobs, stop_reason, …) pass unchecked.
 */
const completionChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().optional(),
        text: z.string().nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: z
    .object({
      prompt_tokens: count,
      completion_tokens: count,
      // vLLM only fills this with --enable-prompt-tokens-details; otherwise absent or null.
      prompt_tokens_details: z.object({ cached_tokens: count.nullish() }).nullish(),
    })
    .nullish(),
  // llama-server extras.
  timings: z
    .object({ cache_n: count.optional(), prompt_n: count.optional(), predicted_n: count.optional() })
    .nullish(),
  tokens_cached: count.nullish(),
});
type CompletionChunk = z.infer<typeof completionChunkSchema>;

const MAX_BUFFERED_CHARS = 1 << 20;
const DEFAULT_STREAM_ERROR_STATUS = 500;

/** A `data:` payload, or the value of a bare `error:` line (older llama-server sends errors that way). */
type StreamItem = { kind: "data"; text: string } | { kind: "error"; text: string };

function readErrorStatus(code: number | string | undefined): number {
  return typeof code === "number" && code >= 400 && code < 600 ? code : DEFAULT_STREAM_ERROR_STATUS;
}

function parseChunk(item: StreamItem): CompletionChunk {
  let json: unknown;
  try {
    json = JSON.parse(item.text);
  } catch (cause) {
    throw new EngineFailureError(`engine sent a malformed stream chunk: ${item.text.slice(0, 200)}`, {
      cause,
    });
  }
  // Both servers report failures after the 200 header as `data: {"error":{…}}` instead of a chunk.
  const errorText =
    item.kind === "error" ? item.text : hasErrorField(json) ? JSON.stringify(json) : undefined;
  if (errorText !== undefined) {
    const body = readErrorBody(errorText);
    throw mapEngineError(readErrorStatus(body.code), body);
  }
  const parsed = completionChunkSchema.safeParse(json);
  if (!parsed.success) {
    throw new EngineFailureError(`engine sent an unexpected stream chunk: ${item.text.slice(0, 200)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function hasErrorField(json: unknown): boolean {
  return typeof json === "object" && json !== null && "error" in json;
}

/**
 * Yields the chunks of an SSE completion stream until `[DONE]`. Aborting `signal` cancels the body, which
 * also drops the connection so the engine stops decoding; the generator then just ends and the caller,
 * which owns the signal, reports the abort. A body that errors or holds a malformed chunk throws
 * EngineFailureError; an error event throws its mapped wire error.
 */
async function* parseCompletionStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<CompletionChunk, void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const items: StreamItem[] = [];
  let overflow: EngineFailureError | undefined;
  const parser = createParser({
    maxBufferSize: MAX_BUFFERED_CHARS,
    onEvent: (event) => items.push({ kind: "data", text: event.data }),
    onError: (error) => {
      if (error.type === "unknown-field" && error.field === "error" && error.value !== undefined) {
        items.push({ kind: "error", text: error.value });
      } else if (error.type === "max-buffer-size-exceeded") {
        overflow = new EngineFailureError("engine stream exceeded the SSE buffer limit", { cause: error });
      }
    },
  });
  const cancel = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  if (signal.aborted) cancel();
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch (cause) {
        if (signal.aborted) return;
        throw new EngineFailureError("engine stream broke mid-way", { cause });
      }
      if (result.done) parser.reset({ consume: true });
      else parser.feed(decoder.decode(result.value, { stream: true }));
      if (overflow !== undefined) throw overflow;
      for (const item of items.splice(0)) {
        if (item.kind === "data" && item.text.trim() === "[DONE]") return;
        yield parseChunk(item);
      }
      if (result.done) return;
    }
  } finally {
    signal.removeEventListener("abort", cancel);
    // Releases the connection when the consumer stops early ([DONE], a thrown error); a no-op after the end.
    void reader.cancel().catch(() => undefined);
  }
}

interface ObservedUsage {
  /** The last `usage` object of the stream (vLLM: the `choices: []` chunk; llama-server: the finish chunk). */
  usage?: NonNullable<CompletionChunk["usage"]>;
  /** llama-server's native counters, when present. */
  timings?: NonNullable<CompletionChunk["timings"]>;
  tokensCached?: number;
  /** Text-bearing chunks: both servers send one per generated token. */
  textChunks: number;
}

const toCount = (value: number): number => Math.max(0, Math.trunc(value));

/** Prefers the OpenAI usage; falls back to what llama-server's own counters say. */
function readCompletionUsage(observed: ObservedUsage): Usage {
  const { usage, timings } = observed;
  const reportedCached =
    usage?.prompt_tokens_details?.cached_tokens ?? timings?.cache_n ?? observed.tokensCached;
  if (usage !== undefined) {
    const promptTokens = toCount(usage.prompt_tokens);
    const cachedPromptTokens = Math.min(promptTokens, toCount(reportedCached ?? 0));
    return {
      promptTokens,
      cachedPromptTokens,
      evaluatedPromptTokens: promptTokens - cachedPromptTokens,
      completionTokens: toCount(usage.completion_tokens),
    };
  }
  // No usage chunk (an old server, or usage not enabled): the prompt size is unknown unless timings tell.
  const cachedPromptTokens = toCount(reportedCached ?? 0);
  const evaluatedPromptTokens = toCount(timings?.prompt_n ?? 0);
  return {
    promptTokens: cachedPromptTokens + evaluatedPromptTokens,
    cachedPromptTokens,
    evaluatedPromptTokens,
    completionTokens: toCount(timings?.predicted_n ?? observed.textChunks),
  };
}

/** vLLM can also end a stream with `abort` (engine-side cancel, shutdown): that output is not usable. */
function mapFinishReason(raw: string): FinishReason {
  if (raw === "stop" || raw === "length") return raw;
  throw new EngineFailureError(`engine ended the generation with finish_reason "${raw}"`);
}

export interface RunCompletionInput {
  client: EngineHttpClient;
  body: CompletionBody;
  signal: AbortSignal;
  now: () => number;
  onTextDelta?: ((delta: string) => void) | undefined;
  /** Called once, when the first token shows the prompt has been evaluated (its KV is resident). */
  onFirstToken?: () => void;
}

async function readBodyText(response: Response): Promise<string> {
  try {
    return await response.text();
  } catch {
    return "";
  }
}

async function openStream(input: RunCompletionInput): Promise<ReadableStream<Uint8Array>> {
  let response: Response;
  try {
    response = await input.client.send("/v1/completions", {
      method: "POST",
      body: input.body,
      signal: input.signal,
      accept: "text/event-stream",
    });
  } catch (cause) {
    if (input.signal.aborted) throw toAbortError(input.signal);
    throw new EngineFailureError("could not reach the engine server", { cause });
  }
  if (!response.ok) throw mapHttpError(response.status, await readBodyText(response));
  if (response.body === null) throw new EngineFailureError("engine answered without a body");
  return response.body;
}

/**
 * Streams one completion. The server queues internally and does not say for how long, so its queueing
 * is folded into prefillMs (request sent → first token) and queueMs is 0.
 */
export async function runCompletion(input: RunCompletionInput): Promise<EngineGenerateResult> {
  const { signal, now } = input;
  throwIfAborted(signal);
  const startedAt = now();
  const body = await openStream(input);
  let text = "";
  let rawFinishReason: string | undefined;
  let firstTokenAt: number | undefined;
  const observed: ObservedUsage = { textChunks: 0 };
  try {
    for await (const chunk of parseCompletionStream(body, signal)) {
      for (const choice of chunk.choices) {
        if ((choice.index ?? 0) !== 0) continue;
        if (choice.text) {
          if (firstTokenAt === undefined) {
            firstTokenAt = now();
            input.onFirstToken?.();
          }
          text += choice.text;
          observed.textChunks += 1;
          input.onTextDelta?.(choice.text);
        }
        if (choice.finish_reason) rawFinishReason = choice.finish_reason;
      }
      if (chunk.usage) observed.usage = chunk.usage;
      if (chunk.timings) observed.timings = chunk.timings;
      if (chunk.tokens_cached !== undefined && chunk.tokens_cached !== null) {
        observed.tokensCached = chunk.tokens_cached;
      }
    }
  } catch (error) {
    throwIfAborted(signal);
    throw error;
  }
  throwIfAborted(signal);
  if (rawFinishReason === undefined) {
    throw new EngineFailureError("engine stream ended without a finish_reason");
  }
  const finishedAt = now();
  const prefillEnd = firstTokenAt ?? finishedAt;
  return {
    text,
    finishReason: mapFinishReason(rawFinishReason),
    usage: readCompletionUsage(observed),
    queueMs: 0,
    prefillMs: Math.max(0, prefillEnd - startedAt),
    decodeMs: Math.max(0, finishedAt - prefillEnd),
  };
}
