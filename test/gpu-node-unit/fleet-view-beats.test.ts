import { describe, expect, it } from "vitest";
import { WIRE_VERSION, type NodeStatus } from "../../schema/wire/v2/index.ts";
import { chooseNode } from "../../workers/src/fleet/choose-node.ts";
import { FleetView } from "../../workers/src/fleet/fleet-view.ts";
import { PlacementLedger } from "../../workers/src/fleet/placement-ledger.ts";

const idle = (nodeId: string): NodeStatus => ({
  version: WIRE_VERSION,
  nodeId,
  engine: "llama.cpp",
  baseModel: { name: "SmolLM2", revision: "r" },
  adapters: [{ id: "chat", revision: "r", lora: true, totalSlots: 2, freeSlots: 2, warmConversations: [] }],
  inFlight: 0,
  maxConcurrent: 16,
  queueDepth: 0,
  features: [],
  startedAt: 0,
  updatedAt: 0,
  heartbeatIntervalMs: 500,
  load: { prefillTokensPerSecond: 500, hopMs: 2_000 },
});

/** A conversation object's own view of the fleet, as its heartbeat watch fills it: every node's latest beat. */
function watchFrom(ledger: PlacementLedger, clock: () => number, beats: ReadonlyMap<string, number>) {
  const view = new FleetView({
    now: clock,
    staleAfterMs: 10_000,
    firstSeen: (nodeId, revision) => ledger.firstSeenBeat(nodeId, revision),
  });
  for (const [nodeId, revision] of beats) view.update(idle(nodeId), revision);
  return view;
}

function place(ledger: PlacementLedger, view: FleetView, conversationId: string) {
  const choice = chooseNode({
    nodes: view.nodes(),
    adapter: "chat",
    conversationId,
    promptTokens: 500,
    recentHops: ledger.recentHops((nodeId) => view.seenAt(nodeId)),
  });
  ledger.record({
    nodeId: choice.nodeId ?? "",
    hop: "answer",
    conversationId,
    adapter: "chat",
    promptTokens: 500,
  });
  return choice.nodeId;
}

describe("conversation objects that share an isolate's ledger", () => {
  it("see each other's placements since a beat, though a later watch is handed that beat again", () => {
    let clock = 1_000;
    const ledger = new PlacementLedger(() => clock);
    const beats = new Map([
      ["n1", 11],
      ["n2", 12],
    ]);
    const first = watchFrom(ledger, () => clock, beats);
    clock = 1_050;
    const firstNode = place(ledger, first, "conv-a");
    // A conversation whose own pick, on idle nodes, is the same node.
    const second = [...Array(64).keys()]
      .map((i) => `conv-${i}`)
      .find(
        (id) =>
          chooseNode({ nodes: first.nodes(), adapter: "chat", conversationId: id }).nodeId === firstNode,
      );
    expect(second).toBeDefined();
    // Its object starts 100 ms later; its watch delivers the same beats, which do not show conv-a's hop yet.
    clock = 1_150;
    const view = watchFrom(ledger, () => clock, beats);
    expect(view.seenAt("n1")).toBe(1_000);
    expect(place(ledger, view, second as string)).not.toBe(firstNode);
  });

  it("a new beat is timed when this isolate first sees it, by whichever object sees it first", () => {
    let clock = 5_000;
    const ledger = new PlacementLedger(() => clock);
    expect(ledger.firstSeenBeat("n1", 3)).toBe(5_000);
    clock = 5_400;
    expect(ledger.firstSeenBeat("n1", 3)).toBe(5_000);
    expect(ledger.firstSeenBeat("n1", 4)).toBe(5_400);
    expect(ledger.firstSeenBeat("n2", 3)).toBe(5_400);
  });
});
