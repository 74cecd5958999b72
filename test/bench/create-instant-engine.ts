import type { Engine } from "../../gpu-nodes/src/engine/engine.ts";

/**
 * An engine that answers at once, for measuring what the edge and NATS add to a turn: GPU time is subtracted
 * from the client's time anyway, and a real model would only make a 5,000-turn run take hours.
 */
export function createInstantEngine(adapters: readonly string[]): Engine {
  const warm = new Map<string, string[]>();
  return {
    kind: "instant",
    baseModel: { name: "instant", revision: "sha256:0000000000000000" },
    adapters: adapters.map((id) => ({ id, revision: "sha256:0000000000000000", lora: false })),
    // eslint-disable-next-line @typescript-eslint/require-await -- Engine.generate is async; this engine has nothing to wait for
    async generate(request) {
      const text = request.constraint?.type === "choice" ? (request.constraint.choices[0] ?? "") : "ok.";
      request.onTextDelta?.(text);
      const list = warm.get(request.adapter) ?? [];
      warm.set(
        request.adapter,
        [request.conversationId, ...list.filter((c) => c !== request.conversationId)].slice(0, 4),
      );
      const promptTokens = Math.ceil(request.prompt.length / 4);
      return {
        text,
        finishReason: "stop",
        usage: {
          promptTokens,
          cachedPromptTokens: 0,
          evaluatedPromptTokens: promptTokens,
          completionTokens: 1,
        },
        queueMs: 0,
        prefillMs: 0,
        decodeMs: 0,
      };
    },
    snapshot: () =>
      adapters.map((adapter) => ({
        adapter,
        totalSlots: 4,
        freeSlots: 4,
        warmConversations: warm.get(adapter) ?? [],
        waiting: 0,
      })),
    close: () => Promise.resolve(),
  };
}
