import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS } from "../../schema/harness/default-harness.ts";
import { ConversationTurns } from "../../workers/src/turns/conversation-turns.ts";
import type { StartTurnResult } from "../../workers/src/conversation/conversation-rpc.ts";
import {
  META,
  MemoryConversationStore,
  collectParts,
  createScriptedHops,
  createTestDeps,
} from "./turn-loop-fixtures.ts";

const streamOf = (result: StartTurnResult) => {
  if (!result.ok) throw new Error(`refused: ${result.refusal.code}`);
  return result.stream;
};

describe("route confidence", () => {
  it("is stored with the route decision and shown as mol.route.confidence; under minConfidence the previous specialist stays", async () => {
    const replies = [
      { label: "coding", confidence: 0.97 },
      { label: "chat", confidence: 0.31 },
      { label: "genui", confidence: 0.88 },
    ];
    const scripted = createScriptedHops({
      route: () => Promise.resolve(replies.shift() ?? { label: "chat" }),
    });
    const store = new MemoryConversationStore(META);
    const harness = { ...DEFAULT_HARNESS, router: { ...DEFAULT_HARNESS.router, minConfidence: 0.5 } };
    const { deps, outbox } = createTestDeps(scripted.hops, { harness });
    const turns = new ConversationTurns({ ...deps, store, outbox });
    const mols = [];
    for (const text of ["write a sort", "thanks, and another one", "now show it as a table"]) {
      const [start] = await collectParts(streamOf(turns.startTurn({ conversationId: META.id, text })));
      mols.push(start?.type === "turn-start" ? start.turn.mol : undefined);
    }
    await turns.afterTurns(() => Promise.resolve());
    const decisions = store.events.filter((e) => e.type === "route_decision");
    expect(decisions.map((d) => d.label)).toEqual(["coding", "coding", "genui"]);
    expect(decisions.map((d) => d.router?.confidence)).toEqual([0.97, 0.31, 0.88]);
    expect(decisions[1]?.router?.lowConfidenceLabel).toBe("chat");
    expect(mols.map((m) => m?.route)).toEqual([
      { confidence: 0.97 },
      { confidence: 0.31, lowConfidenceLabel: "chat" },
      { confidence: 0.88 },
    ]);
  });
});
