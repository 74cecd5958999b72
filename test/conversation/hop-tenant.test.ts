import { placeOverFleet } from "../../workers/src/fleet/hop-placement.ts";
import { describe, expect, it } from "vitest";
import { OverloadedError, WIRE_VERSION, type NodeStatus } from "../../schema/wire/v2/index.ts";
import { mapTurnErrorToApiError } from "../../workers/src/api/errors/api-error.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { TurnStreamPart } from "../../workers/src/conversation/turn-record.ts";
import {
  META,
  MemoryConversationStore,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "./turn-loop-fixtures.ts";

function node(nodeId: string, features: string[]): NodeStatus {
  return {
    version: WIRE_VERSION,
    nodeId,
    engine: "llama.cpp",
    baseModel: { name: "tiny", revision: "r" },
    adapters: ["l0", "chat", "agent", "coding", "genui"].map((id) => ({
      id,
      revision: "r",
      lora: true,
      totalSlots: 4,
      freeSlots: 4,
      warmConversations: [],
    })),
    inFlight: 0,
    maxConcurrent: 8,
    queueDepth: 0,
    features,
    startedAt: 0,
    updatedAt: 0,
    heartbeatIntervalMs: 1000,
  };
}

async function runTurn(scripted: ReturnType<typeof createScriptedHops>, nodes: NodeStatus[]) {
  const store = new MemoryConversationStore(META);
  const { deps, outbox } = createTestDeps(scripted.hops, {
    placement: placeOverFleet({ nodes: () => Promise.resolve(nodes) }),
  });
  const turns = new ConversationTurns({ ...deps, store, outbox });
  const result = turns.startTurn({ conversationId: META.id, text: "hi" });
  if (!result.ok) throw new Error(`refused: ${result.refusal.code}`);
  const parts = await collectParts(result.stream);
  await turns.afterTurns(() => Promise.resolve());
  return parts;
}

describe("the tenant on generate requests", () => {
  it("is sent on every request, to a chosen node and on the queue group alike (every v2 node queues by tenant)", async () => {
    for (const nodes of [[node("n1", [])], []]) {
      const scripted = createScriptedHops({});
      await runTurn(scripted, nodes);
      const hops = [...scripted.calls.route, ...scripted.calls.answer, ...scripted.calls.summary];
      expect(hops).toHaveLength(3);
      for (const hop of hops) expect(hop.tenantId).toBe(META.tenantId);
    }
  });
});

describe("a full node queue", () => {
  it("fails over, and a turn every node refused carries the node's retryAfterMs to the 503", async () => {
    const scripted = createScriptedHops({
      // eslint-disable-next-line @typescript-eslint/require-await -- a stream that fails on its first read
      answer: async function* () {
        yield* [];
        throw new OverloadedError("queue full", { retryAfterMs: 2_500 });
      },
    });
    const nodes = ["a", "b", "c"].map((id) => node(id, []));
    const parts = await runTurn(scripted, nodes);
    expect(scripted.calls.answer).toHaveLength(3);
    const failed = parts.at(-1) as Extract<TurnStreamPart, { type: "turn-error" }>;
    expect(failed.error).toMatchObject({ code: "overloaded", retryAfterMs: 2_500 });
    const response = mapTurnErrorToApiError(failed.error);
    expect(response.status).toBe(503);
    expect(response.headers).toMatchObject({ "retry-after": "3", "retry-after-ms": "2500" });
  });
});
