import type { Engine } from "../../gpu-nodes/src/engine/engine.ts";
import { fixedAdapters } from "../harness/fixed-adapters.ts";

/** A view containing this makes the engine emit one delta and then hold the hop until it is cancelled. */
export const HOLD_UNTIL_CANCELLED = "[hold until cancelled]";

export interface StreamingEngine extends Engine {
  /** Hops the engine saw cancelled (the edge's cancel reached the node). */
  readonly cancelled: number;
}

/**
 * An engine without a model, for tests about the wire and NATS rather than decoding: an answer streams exactly
 * `maxTokens` one-character deltas (so a test can ask for the longest answer the wire allows), a constrained
 * hop (route) returns its first choice.
 */
export function createStreamingEngine(adapters: readonly string[]): StreamingEngine {
  let cancelled = 0;
  const result = (text: string, completionTokens: number) => ({
    text,
    finishReason: "stop" as const,
    usage: { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens },
    queueMs: 0,
    prefillMs: 0,
    decodeMs: 0,
  });
  const { nameOf, ...adapterVerbs } = fixedAdapters(adapters, "sha256:0000000000000000");
  return {
    kind: "streaming-test",
    baseModel: { name: "none", revision: "sha256:0000000000000000" },
    ...adapterVerbs,
    get cancelled() {
      return cancelled;
    },
    async generate(request) {
      if (request.constraint?.type === "choice") return result(request.constraint.choices[0] ?? "", 1);
      if (request.prompt.includes(HOLD_UNTIL_CANCELLED)) {
        request.onTextDelta?.("x");
        await new Promise<void>((resolve) => {
          request.signal.addEventListener("abort", () => {
            resolve();
          });
        });
        cancelled++;
        // The engine contract: reject with the abort's reason (the node's typed `cancelled` error).
        throw request.signal.reason;
      }
      for (let i = 0; i < request.maxTokens; i++) request.onTextDelta?.("x");
      return result("x".repeat(request.maxTokens), request.maxTokens);
    },
    snapshot: () =>
      adapters.map((adapter) => ({
        adapter,
        name: nameOf(adapter),
        totalSlots: 4,
        freeSlots: 4,
        warmConversations: [],
        waiting: 0,
      })),
    close: () => Promise.resolve(),
  };
}
