import { describe, expect, it } from "vitest";
import {
  PlacementLedger,
  RECENT_HOP_WINDOW_MS,
  estimatePromptTokens,
} from "../../workers/src/fleet/placement-ledger.ts";

const hop = (nodeId: string, conversationId = "c1") =>
  ({ nodeId, hop: "answer", conversationId, adapter: "chat", promptTokens: 100 }) as const;

describe("PlacementLedger", () => {
  it("counts the hops placed on a node after its last heartbeat, within the window", () => {
    let clock = 10_000;
    const ledger = new PlacementLedger(() => clock);
    ledger.record(hop("a"));
    clock = 10_100;
    ledger.record(hop("a"));
    ledger.record(hop("b"));
    // a's beat came between its two placements; b never beat.
    expect(ledger.recentHops((id) => (id === "a" ? 10_050 : undefined))).toEqual(
      new Map([
        ["a", 1],
        ["b", 1],
      ]),
    );
    clock = 10_100 + RECENT_HOP_WINDOW_MS + 1;
    expect(ledger.recentHops(() => undefined).size).toBe(0);
  });

  it("stops counting a hop once it settles: a finished hop is no load on its node", () => {
    const ledger = new PlacementLedger(() => 10_000);
    const settleFirst = ledger.record(hop("a"));
    ledger.record(hop("a", "c2"));
    expect(ledger.recentHops(() => undefined).get("a")).toBe(2);
    settleFirst();
    settleFirst();
    expect(ledger.recentHops(() => undefined).get("a")).toBe(1);
  });

  it("remembers each pair's last prompt size, a summary's apart from the views'", () => {
    const ledger = new PlacementLedger(() => 0);
    ledger.record({ ...hop("a"), promptTokens: 1_200 });
    ledger.record({ ...hop("a"), hop: "summary", promptTokens: 1_500 });
    expect(ledger.heldTokens("c1", "chat", "answer")).toBe(1_200);
    expect(ledger.heldTokens("c1", "chat", "route")).toBe(1_200);
    expect(ledger.heldTokens("c1", "chat", "summary")).toBe(1_500);
    expect(ledger.heldTokens("c2", "chat", "answer")).toBeUndefined();
  });

  it("counts what an answered hop generated as held, and only for the pair's latest hop", () => {
    const ledger = new PlacementLedger(() => 0);
    const settleFirst = ledger.record({ ...hop("a"), promptTokens: 300 });
    settleFirst(1_300);
    expect(ledger.heldTokens("c1", "chat", "answer")).toBe(1_300);
    const settleFailed = ledger.record({ ...hop("b"), promptTokens: 1_320 });
    settleFailed();
    expect(ledger.heldTokens("c1", "chat", "answer")).toBe(1_320);
    // A late settle of an earlier hop does not overwrite what the newer one left.
    const settleOld = ledger.record({ ...hop("a"), promptTokens: 1_400 });
    ledger.record({ ...hop("b"), promptTokens: 1_500 });
    settleOld(2_000);
    expect(ledger.heldTokens("c1", "chat", "answer")).toBe(1_500);
  });

  it("estimates prompt tokens at four characters each", () => {
    expect(estimatePromptTokens("")).toBe(0);
    expect(estimatePromptTokens("x".repeat(4_001))).toBe(1_001);
  });
});
