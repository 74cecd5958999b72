import type { HopFacts } from "../db/timeline-event.ts";
import type { FinishReason } from "../../../schema/wire/v2/index.ts";
import type { GenerateDeps, GenerateTarget } from "./generate-deps.ts";
import { generateOnce } from "./generate-once.ts";

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
  const { result, facts } = await generateOnce(deps, q, {
    sampling: { maxTokens: q.maxTokens, temperature: 0, topP: 1, topK: 1 },
    timeoutMs: q.timeoutMs,
  });
  return {
    text: result.text.trim(),
    finishReason: result.finishReason === "tool_calls" ? "stop" : result.finishReason,
    facts,
  };
}
