import { setTimeout as delay } from "node:timers/promises";
import type { Engine, EngineGenerateRequest } from "../../gpu-nodes/src/engine/engine.ts";
import { fixedAdapters } from "../harness/fixed-adapters.ts";

const REVISION = "sha256:0000000000000000";

/** An answer that streams `words` words, `wordMs` apart, with that many KV slots reported per adapter. */
export interface ScriptedAnswer {
  words: number;
  wordMs: number;
  slots: number;
}

/** Sleeps unless the request is cancelled first; then fails with the request's own abort reason. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => {
    throw signal.reason as Error;
  });
}

/**
 * An engine without a model, for benches that measure the mesh rather than the GPU. Without a script it answers
 * at once ("ok."): what the edge and NATS add to a turn, since GPU time is subtracted from the client's time
 * anyway and a real model would make a 5,000-turn run take hours. With one (the soak), a route still picks the
 * first choice at once and a summary is one short line, but the answer streams for a while, so a SIGKILL lands
 * mid-stream and the edge has a continuation to take over.
 */
export function createInstantEngine(adapters: readonly string[], script?: ScriptedAnswer): Engine {
  const slots = script?.slots ?? 4;
  const warm = new Map<string, string[]>();
  const touch = (request: EngineGenerateRequest) => {
    const list = warm.get(request.adapter) ?? [];
    warm.set(
      request.adapter,
      [request.conversationId, ...list.filter((c) => c !== request.conversationId)].slice(
        0,
        Math.min(slots, 16),
      ),
    );
  };
  const { nameOf, ...adapterVerbs } = fixedAdapters(adapters, REVISION);
  return {
    kind: script ? "scripted" : "instant",
    baseModel: { name: script ? "scripted" : "instant", revision: REVISION },
    ...adapterVerbs,
    async generate(request) {
      const started = performance.now();
      let text = "";
      const emit = (delta: string) => {
        text += delta;
        request.onTextDelta?.(delta);
      };
      if (request.constraint?.type === "choice") emit(request.constraint.choices[0] ?? "");
      else if (!script) emit("ok.");
      else if (request.lane === "summary") emit("The user asked; the assistant answered.");
      else {
        const words = Math.min(script.words, request.maxTokens);
        for (let i = 0; i < words; i++) {
          if (i > 0) await sleep(script.wordMs, request.signal);
          emit(`w${i} `);
        }
      }
      touch(request);
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
        decodeMs: script ? performance.now() - started : 0,
      };
    },
    snapshot: () =>
      adapters.map((adapter) => ({
        adapter,
        name: nameOf(adapter),
        totalSlots: slots,
        freeSlots: slots,
        warmConversations: warm.get(adapter) ?? [],
        waiting: 0,
      })),
    close: () => Promise.resolve(),
  };
}
