import { EngineFailureError } from "../../../../schema/wire/v1/index.ts";
import type { EngineGenerateResult } from "../engine.ts";
import type { CompletionBody } from "./build-completion-body.ts";
import type { EngineHttpClient } from "./engine-http-client.ts";
import { mapFinishReason } from "./map-finish-reason.ts";
import { mapHttpError } from "./map-http-error.ts";
import { parseCompletionStream } from "./parse-completion-stream.ts";
import { readCompletionUsage, type ObservedUsage } from "./read-completion-usage.ts";
import { toAbortError } from "./to-abort-error.ts";

export interface RunCompletionInput {
  client: EngineHttpClient;
  body: CompletionBody;
  signal: AbortSignal;
  now: () => number;
  onTextDelta?: (delta: string) => void;
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
  if (signal.aborted) throw toAbortError(signal);
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
    if (signal.aborted) throw toAbortError(signal);
    throw error;
  }
  if (signal.aborted) throw toAbortError(signal);
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
