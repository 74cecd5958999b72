import type { HopFacts } from "../db/timeline-event.ts";
import {
  WIRE_VERSION,
  type GenerateRequestInput,
  type GenerateResult,
  type PriorityClass,
} from "../../../schema/wire/v2/index.ts";
import { estimatePromptTokens } from "../fleet/placement-ledger.ts";
import type { GenerateDeps, GenerateTarget } from "./generate-deps.ts";
import { placeHop } from "./place-generate.ts";

/** What a one-reply request asks beyond its target: the output's shape and budget, and the deadline per attempt. */
export type GenerateAsk = Pick<GenerateRequestInput, "constraint" | "sampling" | "return" | "timeoutMs">;

/**
 * One unstreamed `generate` request on the node placement picks, failing over to others on errors another node may
 * not have; its id is `<turnId>.<purpose>.<attempt>` and its priority class the purpose. Returns the node's result and
 * the hop's facts for the timeline (edge timings, placement). Rejects with a typed MolWireError.
 */
export async function generateOnce(
  deps: GenerateDeps,
  q: GenerateTarget & { purpose: PriorityClass },
  ask: GenerateAsk,
): Promise<{ result: GenerateResult; facts: HopFacts }> {
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
          ...ask,
        },
        { nodeId },
      ),
  );
  return {
    result,
    facts: {
      nodeId: result.nodeId,
      usage: result.usage,
      nodeTimings: result.timings,
      edgeTimings: { totalMs: deps.now() - started },
      placement,
      revision: result.revision,
    },
  };
}
