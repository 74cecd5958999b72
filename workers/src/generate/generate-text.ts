import type { HopFacts } from "../db/timeline-event.ts";
import { WIRE_VERSION, type FinishReason } from "../../../schema/wire/v2/index.ts";
import { estimatePromptTokens } from "../fleet/placement-ledger.ts";
import type { GenerateDeps, GenerateTarget } from "./generate-deps.ts";
import { placeHop } from "./place-generate.ts";

export interface TextQuestion extends GenerateTarget {
  /** What the request is for: its id's middle part and its priority class (`summary`, `background`). */
  purpose: "summary" | "background";
  maxTokens: number;
  timeoutMs: number;
}

export interface TextAnswer {
  text: string;
  finishReason: FinishReason;
  facts: HopFacts;
}

/**
 * Text decoded greedily (the same prompt always yields the same text), unstreamed, on the node placement picks,
 * failing over to others. For work nobody waits on: the node runs it beside latency-critical requests without
 * holding them up. Rejects with a typed MolWireError.
 */
export async function generateText(deps: GenerateDeps, q: TextQuestion): Promise<TextAnswer> {
  const started = deps.now();
  const { value: result, placement } = await placeHop(
    {
      placement: deps.placement,
      hop: q.purpose,
      adapter: q.adapter,
      conversationId: q.placementKey ?? q.slotKey,
      lastNodeId: q.lastNodeId,
      promptTokens: estimatePromptTokens(q.prompt),
      canRetry: () => true,
    },
    (nodeId, attempt) =>
      deps.client.generate(
        {
          version: WIRE_VERSION,
          type: "generate",
          requestId: `${q.turnId}.${q.purpose}.${attempt}`,
          turnId: q.turnId,
          ...(q.tenantId === undefined ? {} : { tenantId: q.tenantId }),
          adapter: q.adapter,
          prompt: q.prompt,
          slotKey: q.slotKey,
          priority: q.purpose,
          sampling: { maxTokens: q.maxTokens, temperature: 0, topP: 1, topK: 1 },
          timeoutMs: q.timeoutMs,
        },
        { nodeId },
      ),
  );
  return {
    text: result.text.trim(),
    finishReason: result.finishReason === "tool_calls" ? "stop" : result.finishReason,
    facts: {
      nodeId: result.nodeId,
      usage: result.usage,
      nodeTimings: result.timings,
      edgeTimings: { totalMs: deps.now() - started },
      placement,
    },
  };
}
