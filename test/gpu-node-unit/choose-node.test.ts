import { describe, expect, it } from "vitest";
import { WIRE_VERSION, type NodeStatus } from "../../schema/wire/v1/index.ts";
import { chooseNode } from "../../workers/src/fleet/choose-node.ts";

function node(
  nodeId: string,
  options: {
    warm?: string[];
    inFlight?: number;
    freeSlots?: number;
    queueDepth?: number;
    adapters?: string[];
  } = {},
): NodeStatus {
  return {
    version: WIRE_VERSION,
    nodeId,
    engine: "llama.cpp",
    baseModel: { name: "tiny", revision: "r" },
    adapters: (options.adapters ?? ["chat", "coding"]).map((id) => ({
      id,
      revision: "r",
      lora: true,
      totalSlots: 4,
      freeSlots: options.freeSlots ?? 4,
      warmConversations: options.warm ?? [],
    })),
    inFlight: options.inFlight ?? 0,
    maxConcurrent: 8,
    queueDepth: options.queueDepth ?? 0,
    features: [],
    startedAt: 0,
    updatedAt: 0,
    heartbeatIntervalMs: 1000,
  };
}

describe("chooseNode", () => {
  it("passes over nodes that lack a feature the hop needs, even a warm one", () => {
    const tools = { ...node("b"), features: ["output:tools", "output:tools-auto"] };
    const choice = chooseNode({
      nodes: [node("a", { warm: ["c1"] }), tools],
      adapter: "chat",
      conversationId: "c1",
      requires: ["output:tools", "output:tools-auto"],
    });
    expect(choice).toEqual({ nodeId: "b", reason: "least-loaded" });
    expect(
      chooseNode({ nodes: [node("a")], adapter: "chat", conversationId: "c1", requires: ["output:tools"] }),
    ).toEqual({ reason: "queue-group" });
  });

  it("prefers the node whose KV is warm, even when it is busier", () => {
    const choice = chooseNode({
      nodes: [node("a"), node("b", { warm: ["c1"], inFlight: 5 })],
      adapter: "chat",
      conversationId: "c1",
    });
    expect(choice).toEqual({ nodeId: "b", reason: "warm" });
  });

  it("remembers the last node from the timeline when heartbeats have not caught up", () => {
    const choice = chooseNode({
      nodes: [node("a"), node("b")],
      adapter: "chat",
      conversationId: "c1",
      lastNodeId: "b",
    });
    expect(choice).toEqual({ nodeId: "b", reason: "warm" });
  });

  it("spills from a saturated warm node to the least-loaded other node, and says so", () => {
    const warm = node("a", { warm: ["c1"], inFlight: 8 });
    const choice = chooseNode({
      nodes: [warm, node("b", { inFlight: 3 }), node("c", { inFlight: 1 })],
      adapter: "chat",
      conversationId: "c1",
    });
    expect(choice).toEqual({ nodeId: "c", reason: "spill", spilledFrom: "a" });
  });

  it("never picks a node without the adapter, or one that already failed the hop", () => {
    const nodes = [node("a", { adapters: ["coding"] }), node("b"), node("c")];
    expect(chooseNode({ nodes, adapter: "chat", conversationId: "x", exclude: new Set(["b"]) }).nodeId).toBe(
      "c",
    );
    expect(
      chooseNode({ nodes: [node("a", { adapters: ["coding"] })], adapter: "chat", conversationId: "x" }),
    ).toEqual({ reason: "queue-group" });
  });

  it("spreads new conversations evenly and stably over equally loaded nodes", () => {
    const nodes = ["a", "b", "c", "d"].map((id) => node(id));
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const pick = chooseNode({ nodes, adapter: "chat", conversationId: `conv-${i}` }).nodeId as string;
      counts.set(pick, (counts.get(pick) ?? 0) + 1);
      expect(
        chooseNode({ nodes: [...nodes].reverse(), adapter: "chat", conversationId: `conv-${i}` }).nodeId,
      ).toBe(pick);
    }
    for (const count of counts.values()) expect(count).toBeGreaterThan(60);
  });
});
