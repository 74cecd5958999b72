import { UnknownAdapterError, type AnswerRequest, type StreamPart } from "../../../schema/wire/v1/index.ts";
import type { HopContext } from "./hop-context.ts";

/** A stream part before the writer stamps `version` and `seq`. */
export type StreamPartBody = StreamPart extends infer P
  ? P extends StreamPart
    ? Omit<P, "version" | "seq">
    : never
  : never;

/**
 * The answer hop: `start`, then one `text-delta` per decoded chunk, then `finish`. It throws typed errors; the
 * caller turns them into the stream's single `error` part.
 */
export async function runAnswerHop(
  request: AnswerRequest,
  ctx: HopContext,
  emit: (part: StreamPartBody) => void,
): Promise<void> {
  const adapter = ctx.engine.adapters.find((a) => a.id === request.adapter);
  if (!adapter) throw new UnknownAdapterError(`adapter "${request.adapter}" is not loaded on this node`);
  emit({
    type: "start",
    requestId: request.requestId,
    nodeId: ctx.nodeId,
    adapter: request.adapter,
    revision: adapter.revision,
  });
  const { sampling } = request;
  const result = await ctx.engine.generate({
    adapter: request.adapter,
    conversationId: request.conversationId,
    prompt: request.view,
    maxTokens: sampling.maxTokens,
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    seed: sampling.seed,
    stop: sampling.stop,
    signal: ctx.signal,
    onTextDelta: (delta) => emit({ type: "text-delta", delta }),
  });
  emit({
    type: "finish",
    finishReason: result.finishReason,
    text: result.text,
    usage: result.usage,
    timings: {
      queueMs: result.queueMs,
      prefillMs: result.prefillMs,
      decodeMs: result.decodeMs,
      totalMs: ctx.now() - ctx.receivedAt,
    },
  });
}
